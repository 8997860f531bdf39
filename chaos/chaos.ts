/**
 * `npm run chaos`: starts Weft as separate processes (the API, two workers, two schedulers) on a
 * fresh database and Redis key space, drives runs of a mixed workflow through the public GraphQL
 * API while killing and restarting processes, losing Redis state and terminating PostgreSQL
 * backends at seeded moments, waits for every run to end and checks that nothing was lost, stuck
 * or done twice. See chaos/README.md for what each counter measures.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { WeftApiError, WeftClient } from '../libs/client/src/index.js';
import { audit, failedTasks, history, openTasks, wrongCodeOutputs, type HttpTask } from './audit.js';
import { FAULT_KINDS, FaultInjector, FaultPlanner, killsWorker, SURVIVOR_CHECK_MS, type FaultKind, type FaultRecord, type RedeliveryEvent } from './faults.js';
import {
  UidBlockWatch,
  WeftProcess,
  codeProcesses,
  freePort,
  numberOption,
  onInterrupt,
  processLine,
  provisionTenant,
  weftEnv,
  withDb,
  type HostProcess,
  type UnexpectedExit,
} from './processes.js';
import { Stub, type Hit } from './stub.js';
import {
  CODE_NODES,
  WORKFLOW_ID,
  definition,
  expectedCodeOutput,
  planRun,
  runInput,
  unexpectedOutcome,
  type CodeNode,
  type HttpNode,
  type ObservedRun,
  type RunPlan,
} from './workflow.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'dist/apps/cli/src/main.js');
const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
/** API error codes that retrying the same request cannot fix. */
const PERMANENT = new Set(['BAD_USER_INPUT', 'NOT_FOUND', 'FORBIDDEN', 'UNAUTHENTICATED', 'CONFLICT']);
const POLL_MS = 500;
/** How long the CODE processes left once every Weft process stopped get to die before they are counted. */
const LEFTOVER_GRACE_MS = 3_000;
const PROGRESS_MS = 5_000;

const HELP = `usage: npm run chaos -- [options]

  --seed N             seed of every random choice (default: random, printed)
  --runs N             runs to drive (default 200)
  --concurrency N      runs in flight at once (default 24)
  --deadline S         seconds after the last run started by which every run must have ended (default 300)
  --fault-gap S        mean seconds between faults (default 3)
  --fault-tail S       keep injecting faults this long after the last run started (default 15)
  --no-faults          no faults (a baseline)
  --fault-kinds K,…    only these kinds of faults (default all: ${FAULT_KINDS.join(', ')})
  --flushall           the Redis fault is a real FLUSHALL (only on a machine dedicated to this run)
  --keep               keep the database, the Redis keys and the logs
  --postgres URL       PostgreSQL superuser URL without a database (default postgres://postgres@127.0.0.1:5432)
  --redis URL          Redis URL (default redis://127.0.0.1:6379)
  --quiet              no line per fault (progress and summary only)
`;

interface Options {
  seed: number;
  runs: number;
  concurrency: number;
  deadlineMs: number;
  faultGapMs: number;
  faultTailMs: number;
  faults: boolean;
  /** The kinds of faults to inject. */
  faultKinds: FaultKind[];
  flushAll: boolean;
  keep: boolean;
  postgres: string;
  redis: string;
  quiet: boolean;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seed: { type: 'string' },
      runs: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '24' },
      deadline: { type: 'string', default: '300' },
      'fault-gap': { type: 'string', default: '3' },
      'fault-tail': { type: 'string', default: '15' },
      'no-faults': { type: 'boolean', default: false },
      'fault-kinds': { type: 'string', default: FAULT_KINDS.join(',') },
      flushall: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
      redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const num = numberOption;
  const seed = values.seed === undefined ? randomBytes(3).readUIntBE(0, 3) : num('seed', values.seed, 0);
  if (!Number.isSafeInteger(seed)) throw new Error('--seed must be a non-negative integer');
  const faultKinds = values['fault-kinds']!.split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = faultKinds.filter((k) => !(FAULT_KINDS as readonly string[]).includes(k));
  if (unknown.length || faultKinds.length === 0) throw new Error(`--fault-kinds takes kinds among ${FAULT_KINDS.join(', ')}; got ${values['fault-kinds']}`);
  return {
    seed,
    runs: Math.floor(num('runs', values.runs, 1)),
    concurrency: Math.floor(num('concurrency', values.concurrency, 1)),
    deadlineMs: num('deadline', values.deadline, 1) * 1000,
    faultGapMs: num('fault-gap', values['fault-gap'], 0.1) * 1000,
    faultTailMs: num('fault-tail', values['fault-tail'], 0) * 1000,
    faults: !values['no-faults'],
    faultKinds: [...new Set(faultKinds)] as FaultKind[],
    flushAll: values.flushall!,
    keep: values.keep!,
    postgres: values.postgres!.replace(/\/+$/, ''),
    redis: values.redis!,
    quiet: values.quiet!,
  };
}

/** The longer of the run lease and the job lock the processes run with (their defaults: 15 s). */
function pauseBaseMs(env: NodeJS.ProcessEnv): number {
  const ms = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
  return Math.max(ms(env.WEFT_RUN_LEASE_MS, 15_000), ms(env.WEFT_JOB_LOCK_MS, 15_000));
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);

/** One driven run, as the driver saw it. */
interface Driven {
  plan: RunPlan;
  id?: string;
  last?: ObservedRun;
  /** Why it is not what its plan says (set once it ended). */
  unexpected?: string;
  ended: boolean;
  signalSent: boolean;
  signalDelivered?: boolean;
  /** sendSignal was sent again after a transport error (the first may have landed: its answer says nothing then). */
  signalRetried?: boolean;
  /** startRun never succeeded before the deadline. */
  notStarted?: string;
}

async function main(): Promise<number> {
  // A closed stdout (`| head`) must not stop the run half-way: it still cleans up after itself.
  process.stdout.on('error', () => undefined);
  const o = options(process.argv.slice(2));
  const t0 = performance.now();
  const clock = () => Math.round(performance.now() - t0);
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

  const dbName = `weft_chaos_${o.seed}_${randomBytes(3).toString('hex')}`;
  const logDir = join(tmpdir(), dbName);
  mkdirSync(logDir, { recursive: true });
  const databaseUrl = withDb(o.postgres, dbName, 'weft_app');
  const ownerUrl = withDb(o.postgres, dbName);
  say(
    `chaos: seed ${o.seed} · ${o.runs} runs, ${o.concurrency} at once · faults ${o.faults ? `every ~${o.faultGapMs / 1000} s${o.faultKinds.length < FAULT_KINDS.length ? ` (${o.faultKinds.join(', ')})` : ''}` : 'off'}${o.flushAll ? ' (Redis fault: FLUSHALL)' : ''}`,
  );
  say(`chaos: database ${dbName} · Redis keys weft:${dbName}:* · logs ${logDir}`);

  const env = weftEnv(databaseUrl, ownerUrl, o.redis, { WEFT_LOG_LEVEL: 'log', WEFT_DB_POOL_SIZE: process.env.WEFT_DB_POOL_SIZE ?? '6' });
  // The workers run CODE confined (bubblewrap, a cgroup, a uid of their own) or refuse it: never unconfined.
  delete env.WEFT_CODE_UNCONFINED;
  const codeBefore = codeProcesses();
  if (codeBefore.length)
    say(`chaos: ${codeBefore.length} CODE processes (uid >= 2000000000) on the machine before the run, e.g. ${processLine(codeBefore[0])}`);

  const stub = new Stub(o.seed, clock);
  const redis = new Redis(o.redis, { maxRetriesPerRequest: 3 });
  redis.on('error', () => {});
  let owner: pg.Pool | undefined;
  const procs: WeftProcess[] = [];
  const unexpectedExits: UnexpectedExit[] = [];
  const interrupted = onInterrupt('chaos', say);

  try {
    // 1. Database, tenant, stub, processes.
    const { apiKey } = await provisionTenant(cli, env, `chaos-${o.seed}`);
    owner = new pg.Pool({ connectionString: ownerUrl, max: 3, application_name: 'chaos-driver' });
    owner.on('error', () => {});
    const stubUrl = await stub.start();

    const port = await freePort();
    const apiUrl = `http://127.0.0.1:${port}/graphql`;
    const onExit = (e: UnexpectedExit) => {
      unexpectedExits.push(e);
      say(`[${secs(e.at).padStart(7)}] !! ${e.name} exited on its own (code ${e.code}, signal ${e.signal}); restarting it`);
    };
    const proc = (name: string, args: string[]) => {
      const p = new WeftProcess(name, cli, args, env, logDir, clock, onExit);
      procs.push(p);
      p.start();
      return p;
    };
    const api = proc('api', ['api', '--port', String(port), '--host', '127.0.0.1']);
    const workers = [proc('worker-1', ['worker']), proc('worker-2', ['worker'])];
    const schedulers = [proc('scheduler-1', ['scheduler']), proc('scheduler-2', ['scheduler'])];
    const blockWatch = new UidBlockWatch(workers, clock);
    const watching = setInterval(() => blockWatch.scan(), 500);

    const client = new WeftClient(apiUrl, apiKey);
    for (let i = 0; ; i++) {
      try {
        await client.request('{ __typename }');
        break;
      } catch (err) {
        if (i > 240 || interrupted()) throw new Error(`the API did not answer within 60 s: ${(err as Error).message}`);
        await sleep(250);
      }
    }
    const published = await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
      i: { workflowId: WORKFLOW_ID, definition: JSON.stringify(definition()) },
    });
    say(`chaos: platform up at ${apiUrl} (api, 2 workers, 2 schedulers); stub at ${stubUrl}; ${WORKFLOW_ID} v${published.publishWorkflow.version} published`);
    const tDrive = clock();

    // 2. Drive the runs.
    const driven: Driven[] = Array.from({ length: o.runs }, (_, i) => ({ plan: planRun(o.seed, i), ended: false, signalSent: false }));
    let nextIndex = 0;
    let started = 0;
    let lastStartAt: number | undefined;
    let apiErrors = 0;
    const hardDeadline = () => (lastStartAt === undefined ? Infinity : lastStartAt + o.deadlineMs);
    const pastDeadline = () => interrupted() || clock() > hardDeadline();

    /** Runs `fn` until it succeeds; retries transport errors and non-permanent API errors until the deadline. */
    async function retrying<T>(fn: () => Promise<T>, giveUpAt = Infinity): Promise<T> {
      for (;;) {
        try {
          return await fn();
        } catch (err) {
          if (err instanceof WeftApiError && PERMANENT.has(err.code ?? '')) throw err;
          apiErrors++;
          if (pastDeadline() || clock() > giveUpAt) throw err;
          await sleep(300);
        }
      }
    }

    /**
     * Sends the run's signal. A call retried after a transport error may have landed the first
     * time: the run then consumes one signal and the other stays buffered (the run has a single
     * WAIT_FOR_EVENT, so that is harmless), and `delivered` describes the last call only.
     */
    async function sendSignal(d: Driven): Promise<void> {
      d.signalSent = true;
      let calls = 0;
      try {
        const r = await retrying(() => {
          if (++calls > 1) d.signalRetried = true;
          return client.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, {
            i: { runId: d.id, name: `go-${d.plan.key}`, payload: { token: d.plan.token } },
          });
        });
        d.signalDelivered = r.sendSignal.delivered;
      } catch (err) {
        // CONFLICT: the run finished already (it failed); the outcome check reports it.
        if (!(err instanceof WeftApiError)) throw err;
      }
    }

    async function drive(d: Driven): Promise<void> {
      const p = d.plan;
      try {
        const r = await retrying(
          () =>
            client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, {
              i: { workflowId: WORKFLOW_ID, input: runInput(p), config: { stub: stubUrl }, idempotencyKey: `chaos-${o.seed}-${p.key}` },
            }),
          // An API that cannot take a run for this long will not: give up on this run.
          clock() + o.deadlineMs,
        );
        d.id = r.startRun.id;
      } catch (err) {
        d.notStarted = (err as Error).message.split('\n')[0];
        return;
      } finally {
        started++;
        if (started === o.runs) lastStartAt = clock();
      }
      if (p.signal === 'early') {
        await sleep(p.signalDelayMs);
        await sendSignal(d);
      }
      while (!pastDeadline()) {
        try {
          const r = await client.request(`query($id: ID!) { run(id: $id) { id status error output tasks { nodeId status attempt output error } } }`, {
            id: d.id,
          });
          d.last = r.run as ObservedRun;
        } catch {
          apiErrors++;
        }
        if (d.last && TERMINAL.has(d.last.status)) {
          d.ended = true;
          d.unexpected = unexpectedOutcome(p, d.last);
          return;
        }
        if (d.last && !d.signalSent && d.last.tasks.some((t) => t.nodeId === 'approval' && t.status === 'WAITING')) {
          await sleep(p.signalDelayMs);
          await sendSignal(d);
          continue;
        }
        await sleep(POLL_MS);
      }
    }

    const lanes = Array.from({ length: Math.min(o.concurrency, o.runs) }, async () => {
      while (nextIndex < o.runs && !interrupted()) await drive(driven[nextIndex++]);
    });
    const driving = Promise.all(lanes);

    // 3. Faults, while runs are being started and for a while after.
    const injector = new FaultInjector({ workers, schedulers, api, owner, redis, dbName, flushAll: o.flushAll }, clock, (r: FaultRecord) => {
      if (!o.quiet) say(`[${secs(r.at).padStart(7)}] fault ${r.kind}: ${r.detail}`);
    });
    const allEnded = () => driven.every((d) => d.ended || d.notStarted);
    const faultsOver = () => interrupted() || (lastStartAt !== undefined && (clock() > lastStartAt + o.faultTailMs || allEnded() || pastDeadline()));
    const faulting = (async () => {
      if (!o.faults) return;
      const planner = new FaultPlanner(o.seed, o.faultGapMs, pauseBaseMs(env), o.faultKinds);
      while (!faultsOver()) {
        const f = planner.next();
        const due = clock() + f.gapMs;
        while (clock() < due && !faultsOver()) await sleep(Math.min(100, due - clock()));
        if (faultsOver()) break;
        await injector.apply(f);
      }
    })();

    const faultSummary = () =>
      FAULT_KINDS.map((k) => `${k} ${injector.count(k)}`).join(', ') + (unexpectedExits.length ? ` · unexpected exits ${unexpectedExits.length}` : '');
    const progress = setInterval(() => {
      const ended = driven.filter((d) => d.ended);
      const bad = ended.filter((d) => d.unexpected).length;
      say(
        `[${secs(clock()).padStart(7)}] started ${started}/${o.runs} · ended ${ended.length} (unexpected ${bad}) · in flight ${started - ended.length - driven.filter((d) => d.notStarted).length}` +
          ` · stub hits ${stub.totalHits} · faults: ${faultSummary()}`,
      );
    }, PROGRESS_MS);

    await faulting;
    // Every process up again before the end (kills whose restart is pending restart on their own).
    for (const p of procs) if (!p.running && !p.restartPending) p.start();
    await driving;
    clearInterval(progress);
    const endedAt = clock();
    // Let stale reports and timers that are still in flight land before reading the history.
    await sleep(3_000);
    await injector.settled();

    // 4. Audit (the stub's hits and the fault log are also written next to the process logs).
    writeFileSync(join(logDir, 'stub-hits.json'), JSON.stringify(Object.fromEntries(stub.hits)));
    writeFileSync(join(logDir, 'faults.json'), JSON.stringify({ faults: injector.log, unexpectedExits }, null, 1));
    const a = await audit(owner, CODE_NODES);
    blockWatch.scan();
    clearInterval(watching);
    // Everything stopped, then the CODE processes left on the machine, once they had time to die.
    await Promise.allSettled(procs.map((p) => p.stop()));
    let leftover: HostProcess[] = codeProcesses();
    for (const until = clock() + LEFTOVER_GRACE_MS; leftover.some(live) && clock() < until; leftover = codeProcesses()) await sleep(100);
    const left = leftover.filter(live);
    const leftZombies = leftover.filter((p) => !live(p));
    const blocks = [...uidBlocks(logDir, workers), ...blockWatch.held.map((b) => ({ name: b.worker, first: b.first, last: b.last }))];
    const ours = left.filter((p) => blocks.some((b) => p.uid >= b.first && p.uid <= b.last));
    const foreign = left.length - ours.length;
    const dbStatus = new Map(a.runs.map((r) => [r.id, r.status]));
    // A run the driver saw end whose status later changed in the database is unexpected too.
    for (const d of driven) {
      if (d.ended && d.id && dbStatus.get(d.id) !== d.last!.status) {
        d.unexpected = `status ${d.last!.status} seen over the API, ${dbStatus.get(d.id)} in the database later`;
      }
    }
    const succeeded = driven.filter((d) => d.ended && !d.unexpected);
    const unexpected = driven.filter((d) => d.ended && d.unexpected);
    const notStarted = driven.filter((d) => d.notStarted);
    const stillRunning = driven.filter((d) => d.id && !d.ended);
    const extraRuns = a.runs.length - driven.filter((d) => d.id).length;

    const planOf = new Map(driven.map((d) => [d.plan.key, d.plan]));
    const needed = (key: string, nodeId: string) => (planOf.get(key)?.fail[nodeId as HttpNode] ?? 0) + 1;
    const effects = sideEffects(a.httpTasks, stub.hits, needed, injector, unexpectedExits);
    const wrongCode = wrongCodeOutputs(a.codeTasks, (key, node) => {
      const plan = planOf.get(key);
      return plan ? expectedCodeOutput(plan, node as CodeNode) : undefined;
    });
    const workerKills = injector.log.filter((r) => killsWorker(r.kind) && r.applied);
    const killsWithCode = workerKills.filter((r) => r.codeProcesses?.length);
    const survivors = workerKills.flatMap((r) => (r.codeSurvivors ?? []).map((p) => ({ r, p })));
    const doubled = new Set([...a.doubleCompletions.map((x) => `${x.runId}/${x.nodeId}`), ...a.doubleAppliedReports.map((x) => `${x.runId}/${x.nodeId}`)]);

    const early = driven.filter((d) => d.plan.signal === 'early' && d.signalSent);
    const late = driven.filter((d) => d.plan.signal === 'late' && d.signalSent);
    const failingHits = [...stub.hits.values()].flat().filter((h) => h.outcome !== 200).length;
    const goneHits = [...stub.hits.values()].flat().filter((h) => h.clientGone).length;

    say('');
    say(`== chaos summary · seed ${o.seed} ==`);
    say(
      `runs started                      ${driven.filter((d) => d.id).length} / ${o.runs}${notStarted.length ? ` (${notStarted.length} never started: ${notStarted[0].notStarted})` : ''}`,
    );
    say(`succeeded                         ${succeeded.length}`);
    say(`failed unexpectedly               ${unexpected.length}`);
    say(`still running after the deadline  ${stillRunning.length}   (deadline: ${o.deadlineMs / 1000} s after the last start)`);
    say(`tasks completed more than once    ${doubled.size}`);
    if (extraRuns) say(`runs created twice                ${extraRuns}   (startRun's idempotency key did not hold)`);
    say(
      `HTTP side effects beyond attempts ${effects.unexplained}   (stub hits over min(attempts, needed): ${effects.extraHits} on ${effects.tasksWithExtra} tasks; ` +
        `${effects.extraHits - effects.unexplained} within the at-least-once allowance)`,
    );
    say(`CODE outputs wrong                ${wrongCode.length}   (${a.codeTasks.length} CODE tasks of ${succeededInDb(a.runs)} succeeded runs checked)`);
    say(
      `CODE processes left after the run ${ours.length}   (in this run's workers' uid blocks, ${LEFTOVER_GRACE_MS / 1000} s after every Weft process stopped; ` +
        `${left.length} on the machine with uid >= 2000000000${foreign ? `, ${foreign} of other uid blocks` : ''}` +
        `${leftZombies.length ? `, ${leftZombies.length} zombies besides` : ''}${codeBefore.length ? `; ${codeBefore.length} before the run` : ''})`,
    );
    say(`processes that exited on their own ${unexpectedExits.length}${unexpectedExits.length ? '   (crashes; listed below, not part of the exit code)' : ''}`);
    say(
      `faults                            ${faultSummary()} · ${injector.terminatedBackends} backends terminated · ` +
        `${o.flushAll ? 'FLUSHALL' : `${injector.deletedRedisKeys} Redis keys deleted`}`,
    );
    const sent = (list: Driven[]) => {
      const once = list.filter((d) => !d.signalRetried);
      const retried = list.length - once.length;
      return `buffered ${once.filter((d) => d.signalDelivered === false).length}, delivered ${once.filter((d) => d.signalDelivered).length}${retried ? `, ${retried} resent after a lost answer` : ''}`;
    };
    say(`signals                           early ${early.length} (${sent(early)}) · late ${late.length} (${sent(late)})`);
    say(
      `engine history                    ${a.ignored.reduce((s, x) => s + x.count, 0)} events ignored, ${a.rejected.reduce((s, x) => s + x.count, 0)} rejected, ` +
        `${a.repeatedDispatches} attempts dispatched twice, ${a.timersApplied} timers fired`,
    );
    say(
      `stub                              ${stub.totalHits} hits, ${failingHits} failed by design, ${goneHits} with the caller gone mid-request, ` +
        `${effects.missingHits} attempts without a hit, ${effects.attemptsBeyondNeed.length} tasks with more attempts than failures + 1`,
    );
    say(
      `CODE                              ${a.codeReports.applied} reports applied, ${a.codeReports.ignored} ignored · worker kills with CODE running ${killsWithCode.length} of ${workerKills.length} ` +
        `(${killsWithCode.reduce((n, r) => n + r.codeProcesses!.length, 0)} processes), ${survivors.length} of them still running ${SURVIVOR_CHECK_MS} ms after the kill`,
    );
    say(`CODE isolation                    ${isolationLine(logDir, workers)}`);
    say(
      `CODE uid blocks                   ${new Set(blockWatch.held.map((b) => b.first)).size} held by the workers, ` +
        `${blockWatch.stolen.length} taken over by another process while their worker ran (its executions' uids shared, its processes killed by the taker's sweep)`,
    );
    say(`API calls retried                 ${apiErrors} · driven for ${secs(endedAt - tDrive)}`);

    if (!o.quiet && a.ignored.length) {
      say('');
      say('ignored events:');
      for (const x of a.ignored.slice(0, 8)) say(`  ${String(x.count).padStart(5)}  ${x.type}: ${x.reason}`);
    }
    if (a.rejected.length) {
      say('rejected events:');
      for (const x of a.rejected.slice(0, 8)) say(`  ${String(x.count).padStart(5)}  ${x.type}: ${x.error}`);
    }

    // 5. Evidence for anything wrong.
    const evidence = async (title: string, items: { runId?: string; line: string }[]) => {
      if (!items.length) return;
      say('');
      say(`${title} (${items.length}${items.length > 5 ? ', first 5' : ''}):`);
      for (const it of items.slice(0, 5)) {
        say(`  ${it.line}`);
        if (!it.runId) continue;
        for (const t of await openTasks(owner!, it.runId)) say(`      open task: ${t}`);
        for (const t of await failedTasks(owner!, it.runId)) say(`      failed task: ${t}`);
        for (const h of await history(owner!, it.runId)) say(`      ${h}`);
      }
    };
    await evidence(
      'failed unexpectedly',
      unexpected.map((d) => ({ runId: d.id, line: `run ${d.id} (${d.plan.key}): ${d.unexpected}` })),
    );
    await evidence(
      'still running',
      stillRunning.map((d) => ({
        runId: d.id,
        line:
          `run ${d.id} (${d.plan.key}, signal ${d.plan.signal}${d.signalSent ? ' sent' : ' not sent'}): ` +
          `${d.last?.status ?? 'never read'} at the deadline, ${dbStatus.get(d.id!) ?? 'missing'} in the database now`,
      })),
    );
    await evidence('tasks completed more than once', [
      ...a.doubleCompletions.map((x) => ({ runId: x.runId, line: `run ${x.runId} (${x.key}) node ${x.nodeId} task ${x.taskId}: ${x.actions.join(', ')}` })),
      ...a.doubleAppliedReports.map((x) => ({
        runId: x.runId,
        line: `run ${x.runId} node ${x.nodeId} attempt ${x.attempt}: NodeCompleted applied at seq ${x.seqs.join(', ')}`,
      })),
    ]);
    await evidence(
      'CODE outputs wrong',
      wrongCode.map((x) => ({ runId: x.task.runId, line: x.line })),
    );
    if (left.length || leftZombies.length) {
      say('');
      say(`CODE processes left after the run (${left.length} running, ${leftZombies.length} zombies; first 10):`);
      for (const p of [...left, ...leftZombies].slice(0, 10)) say(`  ${processLine(p)} — ${blockOf(blocks, p.uid)}`);
    }
    if (blockWatch.stolen.length) {
      say('');
      say(`uid blocks taken over while their worker ran (${blockWatch.stolen.length}, first 10):`);
      for (const b of blockWatch.stolen.slice(0, 10)) {
        say(`  ${secs(b.at)}: ${b.worker} (pid ${b.pid}) held uids ${b.first}…${b.last}; now pid ${b.byPid}: ${b.byCmd}`);
      }
    }
    if (survivors.length) {
      say('');
      say(`CODE processes still running ${SURVIVOR_CHECK_MS} ms after their worker's SIGKILL (${survivors.length}, first 10):`);
      for (const { r, p } of survivors.slice(0, 10)) say(`  kill at ${secs(r.at)} (${r.detail}): ${processLine(p)}`);
    }
    await evidence(
      'HTTP side effects beyond attempts, unexplained',
      effects.details.filter((x) => x.unexplained > 0).map((x) => ({ runId: x.task.runId, line: x.line })),
    );
    if (effects.attemptsBeyondNeed.length) {
      say('');
      say(`tasks with more attempts than the stub's failures + 1 — a successful call retried (${effects.attemptsBeyondNeed.length}, first 5):`);
      for (const x of effects.attemptsBeyondNeed.slice(0, 5)) say(`  ${x.line}`);
    }
    if (!o.quiet && effects.details.some((x) => x.unexplained === 0)) {
      say('');
      say('extra hits within the allowance (first 5):');
      for (const x of effects.details.filter((e) => e.unexplained === 0).slice(0, 5)) say(`  ${x.line}`);
    }
    if (unexpectedExits.length) {
      say('');
      say('processes that exited on their own:');
      for (const e of unexpectedExits) {
        say(`  ${secs(e.at)} ${e.name}: code ${e.code}, signal ${e.signal} (log: ${join(logDir, `${e.name}.log`)})`);
        for (const line of e.lastErrors ?? []) say(`      ${line}`);
      }
    }

    const failed =
      unexpected.length +
      stillRunning.length +
      notStarted.length +
      doubled.size +
      effects.unexplained +
      Math.max(0, extraRuns) +
      wrongCode.length +
      ours.length;
    say('');
    say(failed === 0 ? `chaos: PASS (seed ${o.seed})` : `chaos: FAIL (seed ${o.seed}) — re-run with --seed ${o.seed} --keep to inspect`);
    return failed === 0 ? 0 : 1;
  } finally {
    // 6. Clean up.
    await Promise.allSettled(procs.map((p) => p.stop()));
    await stub.close();
    await owner?.end().catch(() => undefined);
    if (o.keep) {
      say(`chaos: kept database ${dbName}, Redis keys weft:${dbName}:* and logs in ${logDir}`);
    } else {
      const admin = new pg.Client({ connectionString: withDb(o.postgres, 'postgres'), application_name: 'chaos-driver' });
      try {
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
        const keys = await redis.keys(`weft:${dbName}:*`);
        if (keys.length) await redis.del(...keys);
        say(`chaos: dropped database ${dbName} and its Redis keys (logs stay in ${logDir})`);
      } catch (err) {
        say(`chaos: cleanup failed: ${(err as Error).message}`);
      } finally {
        await admin.end().catch(() => undefined);
      }
    }
    redis.disconnect();
  }
}

/** Not a zombie: a process that still runs. */
const live = (p: HostProcess) => p.state !== 'Z' && p.state !== 'X';

const succeededInDb = (runs: { status: string }[]) => runs.filter((r) => r.status === 'SUCCEEDED').length;

/** The workers' logs since their first start (empty when unreadable). */
function workerLogs(logDir: string, workers: WeftProcess[]): { name: string; log: string }[] {
  return workers.map((w) => {
    try {
      return { name: w.name, log: readFileSync(join(logDir, `${w.name}.log`), 'utf8') };
    } catch {
      return { name: w.name, log: '' };
    }
  });
}

/** What the workers' start-up logs say about CODE isolation (the last start of the first worker that says it). */
function isolationLine(logDir: string, workers: WeftProcess[]): string {
  for (const { name, log } of workerLogs(logDir, workers)) {
    const lines = log.split('\n').filter((l) => /CODE (isolation|refused|runs UNCONFINED)/.test(l));
    if (!lines.length) continue;
    // The message without its JSON wrapping and parenthesised details (uid ranges, cgroup paths).
    const said = lines[lines.length - 1].replace(/^.*?(CODE (isolation|refused|runs UNCONFINED))/, '$1').replace(/"}\s*$/, '');
    return `${name}: ${said.replace(/ \((?:[^()]|\([^()]*\))*\)/g, '').slice(0, 400)}`;
  }
  return 'not reported by the workers';
}

/** The uid blocks the workers claimed (every start), from their start-up logs: worker name per block. */
function uidBlocks(logDir: string, workers: WeftProcess[]): { name: string; first: number; last: number }[] {
  const blocks: { name: string; first: number; last: number }[] = [];
  for (const { name, log } of workerLogs(logDir, workers)) {
    for (const m of log.matchAll(/a uid of its own per execution \((\d+)…(\d+)\)/g)) blocks.push({ name, first: Number(m[1]), last: Number(m[2]) });
  }
  return blocks;
}

/** Which of this run's workers claimed the block holding `uid`. */
function blockOf(blocks: { name: string; first: number; last: number }[], uid: number): string {
  const names = [...new Set(blocks.filter((b) => uid >= b.first && uid <= b.last).map((b) => b.name))];
  return names.length ? `uid block of ${names.join(', ')}` : "not a uid block of this run's workers";
}

interface SideEffectDetail {
  task: HttpTask;
  hits: number;
  attempts: number;
  /** Executions the task needs by design: its stub failures + 1. */
  needed: number;
  allowance: number;
  unexplained: number;
  line: string;
}

/**
 * HTTP side effects beyond a task's attempts. For every HTTP task: `hits` = stub requests for its
 * (run key, node), counted on arrival; `attempts` = attempts the engine started (task.attempt + 1);
 * `needed` = the stub's designed failures for it + 1 (hit number `needed - 1` is the first that
 * succeeds, so no call is ever due after it). A task's calls are due once per attempt and never
 * after the first successful one: the baseline is min(attempts, needed). The second bound catches
 * an engine that throws a successful call away and retries it as a new attempt.
 *
 * Delivery is at least once, so an attempt may execute again when the execution it was on was
 * lost after (or just before) making its call: a worker SIGKILLed (or exiting on its own) or
 * paused past its lease (and resuming late), or the job lost with Redis state while it ran. Each
 * such event falling within the task's hits (see {@link RedeliveryEvent}) allows one extra hit.
 * Extra hits beyond that allowance are unexplained: a report retried as a new execution, a
 * success turned into a retry, a job redelivered without a crash, a duplicate dispatch.
 * PostgreSQL backend terminations allow nothing: a worker whose report cannot be written must
 * retry the report, not the task.
 */
function sideEffects(
  tasks: HttpTask[],
  hits: Map<string, Hit[]>,
  needed: (key: string, nodeId: string) => number,
  injector: FaultInjector,
  exits: UnexpectedExit[],
): {
  unexplained: number;
  extraHits: number;
  tasksWithExtra: number;
  missingHits: number;
  /** Tasks whose engine started more attempts than the stub's failures required. */
  attemptsBeyondNeed: SideEffectDetail[];
  details: SideEffectDetail[];
} {
  const events: RedeliveryEvent[] = [
    ...injector.redeliveryEvents(),
    // The exit is noticed after the process died: its last request may have arrived up to 1 s earlier.
    ...exits.filter((e) => e.name.startsWith('worker')).map((e) => ({ at: e.at, leadMs: 1_000, what: 'worker crash' })),
  ];
  let unexplained = 0;
  let extraHits = 0;
  let missingHits = 0;
  const details: SideEffectDetail[] = [];
  const attemptsBeyondNeed: SideEffectDetail[] = [];
  for (const task of tasks) {
    const list = hits.get(`${task.key}/${task.nodeId}`) ?? [];
    const attempts = task.attempt + 1;
    const need = needed(task.key, task.nodeId);
    const finished = task.status === 'COMPLETED' || task.status === 'FAILED';
    if (finished && list.length < Math.min(attempts, need)) missingHits += Math.min(attempts, need) - list.length;
    const first = list[0]?.at ?? 0;
    const last = list[list.length - 1]?.at ?? 0;
    const explaining = events.filter((e) => e.at >= first - e.leadMs && e.at <= last + 500);
    const allowance = explaining.length;
    const extra = list.length - Math.min(attempts, need);
    const bad = Math.max(0, extra - allowance);
    const detail: SideEffectDetail = {
      task,
      hits: list.length,
      attempts,
      needed: need,
      allowance,
      unexplained: bad,
      line:
        `run ${task.runId} (${task.key}) node ${task.nodeId}: ${list.length} hits, ${attempts} attempt(s) started, ${need} needed; ` +
        `hits at ${list.map((h) => `${(h.at / 1000).toFixed(2)}s${h.outcome === 200 ? '' : `(${h.outcome})`}${h.clientGone ? '(gone)' : ''}`).join(' ')}; ` +
        (explaining.length
          ? `explained by ${explaining.map((e) => `${e.what} at ${(e.at / 1000).toFixed(2)}s`).join(', ')}`
          : 'no worker kill, pause or Redis loss among them'),
    };
    if (attempts > need) attemptsBeyondNeed.push(detail);
    if (extra <= 0) continue;
    extraHits += extra;
    unexplained += bad;
    details.push(detail);
  }
  return { unexplained, extraHits, tasksWithExtra: details.length, missingHits, attemptsBeyondNeed, details };
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
