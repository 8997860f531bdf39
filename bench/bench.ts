/**
 * `npm run bench`: in one run, on this machine's PostgreSQL and Redis, measures the
 * floors (pgbench, a raw Bull chain), Weft end to end through its public API with separate API,
 * worker and scheduler processes (8 runs in flight of a 20-node HTTP chain, and one run alone),
 * the cost model of a step (SQL statements, transactions, Redis commands, CPU per process) and
 * the engine alone, then prints the ratios against the targets. A missed target is reported, not
 * an error: the exit code is 0 whenever the bench ran. See bench/README.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { WeftClient } from '../libs/client/src/index.js';
import {
  WeftProcess,
  dropInstallation,
  freePort,
  numberOption,
  onInterrupt,
  provisionTenant,
  weftEnv,
  withDb,
  type UnexpectedExit,
} from '../chaos/processes.js';
import { runEngineBench, type EngineResult } from './engine-bench.js';
import { bullFloor, createCounterTable, createStepTables, pgbench, STEP_SCRIPT, type BullFloor, type PgbenchResult } from './floors.js';
import { ENGINE_RATIO_TARGET, LATENCY_TARGET, THROUGHPUT_TARGET, fmt, table, verdict } from './report.js';
import {
  PgCounters,
  commandStats,
  cpuSeconds,
  ensureStatements,
  foreignActiveClients,
  redisPid,
  rowsWritten,
  type StatementRow,
  type StatementsSupport,
  type TableRows,
} from './stats.js';
import { CHAIN_LENGTH, RunWatcher, Stub, WORKFLOW_ID, chainDefinition, median, readRun, soloFigures, startRun, waitForApi, type SoloFigures } from './weft.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'dist/apps/cli/src/main.js');
const RUNTIME_ROLE = 'weft_app';
const IN_FLIGHT = 8;
const COUNTER_ROWS = 1_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const HELP = `usage: npm run bench -- [options]

  --seconds S          length of each measured phase: pgbench, Bull chains, Weft in flight (default 15)
  --warmup-runs N      Weft runs before measuring, ${IN_FLIGHT} at a time (default 16)
  --solo-runs N        runs timed alone (default 3; the median is reported)
  --no-engine          skip the engine bench (its target is then n/a)
  --pg-restart MODE    never (default): leave the PostgreSQL server alone (statements/step is then
                       n/a unless pg_stat_statements is already loaded); auto (as root, with
                       pg_ctlcluster): load it with ALTER SYSTEM SET shared_preload_libraries and a
                       restart of PostgreSQL once no other session is connected (waiting up to 60 s,
                       else n/a), and undo both at the end; force: the same without waiting
  --keep               keep the database, its Redis keys and the process logs
  --postgres URL       PostgreSQL superuser URL without a database (default postgres://postgres@127.0.0.1:5432)
  --redis URL          Redis URL (default redis://127.0.0.1:6379)
  --private-redis      run everything (floors included) on a redis-server of the bench's own, on a
                       free port, so INFO commandstats and its CPU count nobody else's commands
`;

interface Options {
  seconds: number;
  warmupRuns: number;
  soloRuns: number;
  engine: boolean;
  pgRestart: 'auto' | 'never' | 'force';
  keep: boolean;
  postgres: string;
  redis: string;
  privateRedis: boolean;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '15' },
      'warmup-runs': { type: 'string', default: '16' },
      'solo-runs': { type: 'string', default: '3' },
      'no-engine': { type: 'boolean', default: false },
      'pg-restart': { type: 'string', default: 'never' },
      keep: { type: 'boolean', default: false },
      postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
      redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
      'private-redis': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const num = numberOption;
  const restart = values['pg-restart'];
  if (restart !== 'auto' && restart !== 'never' && restart !== 'force') throw new Error('--pg-restart must be auto, never or force');
  return {
    seconds: num('seconds', values.seconds, 1),
    warmupRuns: Math.floor(num('warmup-runs', values['warmup-runs'], 0)),
    soloRuns: Math.floor(num('solo-runs', values['solo-runs'], 1)),
    engine: !values['no-engine'],
    pgRestart: restart,
    keep: values.keep!,
    postgres: values.postgres!.replace(/\/+$/, ''),
    redis: values.redis!,
    privateRedis: values['private-redis']!,
  };
}

/** What one snapshot of the counters holds. */
interface Snapshot {
  wall: number;
  dbTime: Date;
  transactions: number;
  ownQueries: number;
  rows: Map<string, TableRows>;
  redis: Map<string, number>;
  cpu: Map<string, number>;
  pgCpu: Map<number, number>;
}

interface CostModel {
  seconds: number;
  steps: number;
  runsEnded: number;
  runsFailed: number;
  statements?: StatementRow[];
  transactions: number;
  /** Rows written in the window, by table. */
  rows: Map<string, TableRows>;
  redis: Map<string, number>;
  redisOwn: number;
  foreignRedisClients: number;
  /** CPU seconds by process group over the phase. */
  cpu: Map<string, number>;
}

async function main(): Promise<number> {
  process.stdout.on('error', () => undefined);
  const o = options(process.argv.slice(2));
  const lines: string[] = [];
  const say = (l = '') => process.stdout.write(`${l}\n`);
  const started = new Date();
  const load0 = loadavg();

  const dbName = `weft_bench_${randomBytes(4).toString('hex')}`;
  const work = mkdtempSync(join(tmpdir(), `${dbName}-`));
  const ownerUrl = withDb(o.postgres, dbName);
  const databaseUrl = withDb(o.postgres, dbName, RUNTIME_ROLE);
  const prefix = `weft:${dbName}`;
  say(`bench: database ${dbName} · Redis keys ${prefix}:* · logs ${work} · ${o.seconds} s per measured phase`);

  let privateRedis: ChildProcess | undefined;
  if (o.privateRedis) {
    const p = await freePort();
    privateRedis = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    o.redis = `redis://127.0.0.1:${p}`;
    const child = privateRedis;
    process.on('exit', () => child.kill('SIGKILL'));
    say(`bench: private redis-server pid ${privateRedis.pid} on ${o.redis}`);
    for (let i = 0; ; i++) {
      const probe = new Redis(o.redis, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        break;
      } catch (err) {
        probe.disconnect();
        if (i > 50) throw new Error(`the private redis-server did not start: ${(err as Error).message}`);
        await sleep(100);
      }
    }
  }
  const redis = new Redis(o.redis, { maxRetriesPerRequest: 3 });
  redis.on('error', () => undefined);
  const stub = new Stub();
  const procs: WeftProcess[] = [];
  let owner: pg.Client | undefined;
  let watcher: RunWatcher | undefined;
  const unexpected: UnexpectedExit[] = [];
  const interrupted = onInterrupt('bench', say);
  const check = () => {
    if (interrupted()) throw new Error('interrupted');
    if (unexpected.length) throw new Error(`${unexpected[0].name} exited on its own (code ${unexpected[0].code}); see ${work}/${unexpected[0].name}.log`);
  };

  let support: StatementsSupport = { available: false };
  try {
    // 0. The engine alone first, while nothing else of the bench runs.
    let engine: EngineResult | undefined;
    if (o.engine) {
      say('');
      engine = await runEngineBench((l) => say(`  ${l}`));
      say('');
    }

    // 1. pg_stat_statements (may restart PostgreSQL once), the database, the tenant.
    support = await ensureStatements(withDb(o.postgres, 'postgres'), { restart: o.pgRestart, quietMs: 60_000, say });
    if (support.note) say(`bench: ${support.note}`);
    const env = weftEnv(databaseUrl, ownerUrl, o.redis, { WEFT_LOG_LEVEL: process.env.WEFT_LOG_LEVEL ?? 'warn' });
    const { tenantId, apiKey } = await provisionTenant(cli, env, 'bench');
    owner = new pg.Client({ connectionString: ownerUrl, application_name: 'weft-bench' });
    await owner.connect();
    const counters = new PgCounters(owner, dbName, RUNTIME_ROLE, support.available);
    await counters.init();
    await createCounterTable(owner, COUNTER_ROWS);
    await createStepTables(owner, COUNTER_ROWS);

    // 2. Floors, before any Weft process runs.
    say('bench: pgbench (8 clients, then 1)…');
    const pgb8 = await pgbench(ownerUrl, work, { clients: 8, seconds: o.seconds, rows: COUNTER_ROWS });
    const pgb1 = await pgbench(ownerUrl, work, { clients: 1, seconds: Math.max(2, o.seconds / 3), rows: COUNTER_ROWS });
    say("bench: pgbench with a Weft step's transaction (8 clients, then 1)…");
    const step8 = await pgbench(ownerUrl, work, { clients: 8, seconds: o.seconds, rows: COUNTER_ROWS, script: STEP_SCRIPT(COUNTER_ROWS) });
    const step1 = await pgbench(ownerUrl, work, { clients: 1, seconds: Math.max(2, o.seconds / 3), rows: COUNTER_ROWS, script: STEP_SCRIPT(COUNTER_ROWS) });
    check();
    say(`bench: raw Bull chain (${IN_FLIGHT} chains, then 1)…`);
    const bull = await bullFloor(o.redis, prefix, { chains: IN_FLIGHT, seconds: o.seconds, concurrency: IN_FLIGHT });
    check();

    // 3. Weft: API, worker and scheduler as separate processes, the stub, the workflow.
    const stubUrl = await stub.start();
    const port = await freePort();
    const apiUrl = `http://127.0.0.1:${port}/graphql`;
    const t0 = performance.now();
    const clock = () => Math.round(performance.now() - t0);
    const proc = (name: string, args: string[]) => {
      const p = new WeftProcess(name, cli, args, env, work, clock, (e) => {
        unexpected.push(e);
        say(`bench: !! ${e.name} exited on its own (code ${e.code}, signal ${e.signal})`);
      });
      procs.push(p);
      p.start();
      return p;
    };
    const api = proc('api', ['api', '--port', String(port), '--host', '127.0.0.1']);
    const worker = proc('worker', ['worker']);
    const scheduler = proc('scheduler', ['scheduler']);
    const client = new WeftClient(apiUrl, apiKey);
    await waitForApi(client, check, 'the API');
    await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
      i: { workflowId: WORKFLOW_ID, definition: JSON.stringify(chainDefinition()) },
    });
    watcher = new RunWatcher(o.redis, tenantId, client);
    await watcher.start();
    const w = watcher;
    let seq = 0;
    const oneRun = async (): Promise<{ id: string; status: string }> => {
      const id = await startRun(client, stubUrl, seq++);
      return { id, status: await w.wait(id) };
    };
    say(`bench: Weft up (api, worker, scheduler); warming up with ${o.warmupRuns} runs…`);
    for (let done = 0; done < o.warmupRuns; done += IN_FLIGHT) {
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, o.warmupRuns - done) }, oneRun));
      check();
    }
    // Statistics, as autovacuum gathers them within a minute or so of an installation's start:
    // without them PostgreSQL plans the processes' prepared statements on the empty tables'
    // figures, and e.g. the run update scans every run of the tenant through (tenant_id, status)
    // until the first analyze invalidates those plans. The bench measures the steady state.
    await owner.query('ANALYZE');

    // 4. One run alone.
    say(`bench: ${o.soloRuns} run(s) alone…`);
    const soloRuns = [];
    for (let i = 0; i < o.soloRuns; i++) {
      const r = await oneRun();
      soloRuns.push(await readRun(client, r.id));
      check();
    }
    const solo = soloFigures(soloRuns.filter((r) => r.status === 'SUCCEEDED'));
    const soloFailed = soloRuns.filter((r) => r.status !== 'SUCCEEDED').length;

    // 5. 8 runs in flight: lanes start a run as soon as theirs ended; the counters are read
    // around a steady-state window and the lanes drain afterwards.
    say(`bench: ${IN_FLIGHT} runs in flight for ${o.seconds} s…`);
    const nodePids = () =>
      new Map<string, number | undefined>([
        ['weft api', api.pid],
        ['weft worker', worker.pid],
        ['weft scheduler', scheduler.pid],
        ['bench driver + stub', process.pid],
      ]);
    const rPid = await redisPid(redis);
    let redisOwn = 0; // commands the bench itself sends Redis between the snapshots
    const snapshot = async (): Promise<Snapshot> => {
      const s: Snapshot = {
        wall: performance.now(),
        dbTime: await counters.now(),
        transactions: await counters.transactions(),
        ownQueries: counters.ownQueries,
        rows: await counters.tableRows(),
        redis: await commandStats(redis),
        cpu: new Map(),
        pgCpu: new Map(),
      };
      redisOwn++;
      for (const [name, pid] of nodePids()) s.cpu.set(name, (pid && cpuSeconds(pid)) || 0);
      if (rPid) s.cpu.set('redis-server', cpuSeconds(rPid) ?? 0);
      for (const pid of await counters.backendPids()) s.pgCpu.set(pid, cpuSeconds(pid) ?? 0);
      return s;
    };
    let stopping = false;
    const ended: { id: string; status: string }[] = [];
    const lanes = Array.from({ length: IN_FLIGHT }, async () => {
      while (!stopping && !interrupted() && !unexpected.length) ended.push(await oneRun());
    });
    await sleep(Math.max(2_000, o.seconds * 150));
    check();
    const a = await snapshot();
    redisOwn = 0;
    await counters.resetStatements();
    await sleep(o.seconds * 1000);
    const statements = support.available ? await counters.readStatements() : undefined;
    const b = await snapshot();
    redisOwn += 1; // CLIENT LIST below comes after b: only a's INFO is inside the window
    const foreign = await foreignActiveClients(
      redis,
      [process.pid, ...[api, worker, scheduler].flatMap((p) => (p.pid ? [p.pid] : []))],
      Math.ceil((b.wall - a.wall) / 1000),
    );
    stopping = true;
    await Promise.all(lanes);
    check();
    const steps = Number(
      (await owner.query(`SELECT count(*)::int AS n FROM tasks WHERE status = 'COMPLETED' AND finished_at >= $1 AND finished_at < $2`, [a.dbTime, b.dbTime]))
        .rows[0].n,
    );
    const runsInWindow = await owner.query(
      `SELECT count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS ok, count(*) FILTER (WHERE status IN ('FAILED', 'CANCELLED'))::int AS bad
         FROM runs WHERE finished_at >= $1 AND finished_at < $2`,
      [a.dbTime, b.dbTime],
    );
    // Every run of the phase, checked over the API.
    const failedRuns = ended.filter((r) => r.status !== 'SUCCEEDED').length;

    const cost: CostModel = {
      seconds: (b.wall - a.wall) / 1000,
      steps,
      runsEnded: Number(runsInWindow.rows[0].ok) + Number(runsInWindow.rows[0].bad),
      runsFailed: Number(runsInWindow.rows[0].bad),
      statements,
      transactions: b.transactions - a.transactions - (b.ownQueries - a.ownQueries),
      rows: rowsWritten(a.rows, b.rows),
      redis: diff(b.redis, a.redis),
      redisOwn,
      foreignRedisClients: foreign,
      cpu: cpuDiff(a, b),
    };

    // 6. Report.
    const out = report({
      o,
      started,
      load0,
      load1: loadavg(),
      support,
      pgb8,
      pgb1,
      step8,
      step1,
      bull,
      solo,
      soloFailed,
      cost,
      engine,
      phaseRuns: ended.length,
      phaseFailed: failedRuns,
      fallbackPolls: w.fallbackPolls,
      stubHits: stub.hits,
    });
    lines.push(...out);
    say('');
    for (const l of out) say(l);
    const results = join(root, 'bench/results');
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'latest.txt'), `${out.join('\n')}\n`);
    if (engine) writeFileSync(join(results, 'engine-latest.txt'), `${engine.lines.join('\n')}\n`);
    say('');
    say(`bench: report written to bench/results/latest.txt`);
    return 0;
  } finally {
    watcher?.close();
    await Promise.allSettled(procs.map((p) => p.stop()));
    await stub.close();
    await owner?.end().catch(() => undefined);
    if (o.keep) {
      say(`bench: kept database ${dbName}, Redis keys ${prefix}:* and logs in ${work}`);
    } else {
      try {
        const deleted = await dropInstallation(o.postgres, dbName, redis, prefix, 'weft-bench');
        rmSync(work, { recursive: true, force: true });
        say(`bench: dropped database ${dbName}, ${deleted} Redis key${deleted === 1 ? '' : 's'} and the logs`);
      } catch (err) {
        say(`bench: cleanup failed: ${(err as Error).message}`);
      }
    }
    redis.disconnect();
    privateRedis?.kill('SIGTERM');
    if (support.restore) {
      try {
        say(`bench: ${await support.restore()}`);
      } catch (err) {
        say(`bench: could not undo the PostgreSQL change (${(err as Error).message}): restore shared_preload_libraries by hand`);
      }
    }
  }
}

function diff(b: Map<string, number>, a: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

/** CPU seconds per process group between two snapshots; PostgreSQL summed over its processes. */
function cpuDiff(a: Snapshot, b: Snapshot): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, v] of b.cpu) out.set(name, Math.max(0, v - (a.cpu.get(name) ?? 0)));
  let pgSum = 0;
  // A backend that appeared during the window spent all its CPU in it.
  for (const [pid, v] of b.pgCpu) pgSum += Math.max(0, v - (a.pgCpu.get(pid) ?? 0));
  out.set('postgres (bench db + background)', pgSum);
  return out;
}

interface ReportInput {
  o: Options;
  started: Date;
  load0: number[];
  load1: number[];
  support: StatementsSupport;
  pgb8: PgbenchResult;
  pgb1: PgbenchResult;
  /** pgbench running a Weft step's transaction without Weft ({@link STEP_SCRIPT}). */
  step8: PgbenchResult;
  step1: PgbenchResult;
  bull: BullFloor;
  solo: SoloFigures;
  soloFailed: number;
  cost: CostModel;
  engine?: EngineResult;
  phaseRuns: number;
  phaseFailed: number;
  fallbackPolls: number;
  stubHits: number;
}

/** Short text of a statement: whitespace squeezed, cut at `max`. */
function short(q: string, max = 90): string {
  const s = q.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function report(r: ReportInput): string[] {
  const L: string[] = [];
  const { cost } = r;
  const stepsPerSec = cost.steps / cost.seconds;
  const soloMs = median(r.solo.perStepMs);
  const perStep = (n: number) => (cost.steps ? n / cost.steps : NaN);
  const la = (x: number[]) => x.map((v) => v.toFixed(2)).join(' ');

  L.push(
    `== weft bench · ${r.started.toISOString()} · Redis ${r.o.privateRedis ? 'private' : 'shared'} · ${cpus().length} CPUs · Node ${process.version} · load average ${la(r.load0)} at start, ${la(r.load1)} at end ==`,
  );
  if (r.support.note) L.push(`note: ${r.support.note}`);
  L.push('');
  L.push('floors (same PostgreSQL and Redis)');
  for (const l of table(
    ['', 'figure', 'unit', 'detail'],
    [
      ['pgbench single-row UPDATE, 8 clients', fmt(r.pgb8.tps, 0), 'commits/s', `avg latency ${fmt(r.pgb8.latencyMs, 2)} ms, ${r.o.seconds} s`],
      ['pgbench single-row UPDATE, 1 client', fmt(r.pgb1.tps, 0), 'commits/s', `avg latency ${fmt(r.pgb1.latencyMs, 2)} ms`],
      [
        "pgbench, a Weft step's transaction, 8 clients",
        fmt(r.step8.tps, 0),
        'commits/s',
        `avg latency ${fmt(r.step8.latencyMs, 2)} ms; lock + read, 4 row writes in one statement, prepared`,
      ],
      ["pgbench, a Weft step's transaction, 1 client", fmt(r.step1.tps, 0), 'commits/s', `avg latency ${fmt(r.step1.latencyMs, 2)} ms`],
      [`raw Bull chain, ${r.bull.chains} chains`, fmt(r.bull.hopsPerSec, 0), 'hops/s', `processor concurrency ${IN_FLIGHT}`],
      ['raw Bull chain, 1 chain alone', fmt(r.bull.soloHopMs, 2), 'ms/hop', `over ${r.bull.soloHops} hops`],
    ],
    true,
  ))
    L.push(`  ${l}`);
  L.push('');
  L.push(`weft end to end (${CHAIN_LENGTH}-node chain of HTTP GETs to a local stub; weft api + worker + scheduler; public GraphQL API)`);
  const spread = r.solo.perStepMs.length ? `${fmt(Math.min(...r.solo.perStepMs), 1)}–${fmt(Math.max(...r.solo.perStepMs), 1)}` : 'n/a';
  for (const l of table(
    ['', 'figure', 'unit', 'detail'],
    [
      [
        `${IN_FLIGHT} runs in flight`,
        fmt(stepsPerSec, 1),
        'steps/s',
        `${cost.steps} steps completed in ${fmt(cost.seconds, 1)} s; ${cost.runsEnded} runs ended in the window, ${cost.runsFailed} not SUCCEEDED`,
      ],
      [
        '1 run alone',
        fmt(soloMs, 1),
        'ms/step',
        `(finishedAt − createdAt) / ${CHAIN_LENGTH}, median of ${r.solo.perStepMs.length} runs (${spread})${r.soloFailed ? `; ${r.soloFailed} failed` : ''}`,
      ],
      [
        '  task created → completed',
        fmt(r.solo.taskSpanMs, 1),
        'ms',
        'median over tasks: dispatch (taken by the reporting worker, or Bull + claim), HTTP call, report',
      ],
      ['  task completed → next created', fmt(r.solo.handoffMs, 1), 'ms', 'median (0: the completing transaction creates the next task)'],
      ['  run created → first task', fmt(r.solo.firstTaskMs, 1), 'ms', 'median'],
      ['  last task → run finished', fmt(r.solo.tailMs, 1), 'ms', 'median'],
    ],
    true,
  ))
    L.push(`  ${l}`);
  if (r.phaseFailed) L.push(`  !! ${r.phaseFailed} of ${r.phaseRuns} runs of the in-flight phase did not SUCCEED`);
  if (r.fallbackPolls) L.push(`  (${r.fallbackPolls} run(s) were polled over the API because their end was not announced on the run-update channel)`);
  L.push('');

  L.push(`cost model (per completed step, over the ${fmt(cost.seconds, 1)} s in-flight window)`);
  const stmts = cost.statements;
  const sum = (rows: StatementRow[], f: (s: StatementRow) => number) => rows.reduce((s, x) => s + f(x), 0);
  if (stmts) {
    const isBegin = (q: string) => /^\s*(BEGIN|START TRANSACTION)\b/i.test(q);
    const isCommit = (q: string) => /^\s*(COMMIT|ROLLBACK)\b/i.test(q);
    const total = sum(stmts, (s) => s.calls);
    const begins = sum(
      stmts.filter((s) => isBegin(s.query)),
      (s) => s.calls,
    );
    const commits = sum(
      stmts.filter((s) => isCommit(s.query)),
      (s) => s.calls,
    );
    L.push(
      `  SQL statements      ${fmt(perStep(total), 1)} / step   (BEGIN ${fmt(perStep(begins), 1)}, COMMIT/ROLLBACK ${fmt(perStep(commits), 1)}, other ${fmt(perStep(total - begins - commits), 1)}; ` +
        `executor time ${fmt(perStep(sum(stmts, (s) => s.totalMs)), 2)} ms / step; pg_stat_statements, role ${RUNTIME_ROLE}, this database only)`,
    );
  } else {
    L.push(`  SQL statements      n/a / step   (${r.support.note ?? 'pg_stat_statements unavailable'})`);
  }
  L.push(
    `  transactions        ${fmt(perStep(cost.transactions), 2)} / step   (pg_stat_database xact_commit + xact_rollback of this database, the bench's own ${'queries'} taken out)`,
  );
  const written = [...cost.rows].sort((x, y) => y[1].inserted + y[1].updated + y[1].deleted - (x[1].inserted + x[1].updated + x[1].deleted));
  const allRows = written.reduce((n, [, r]) => n + r.inserted + r.updated + r.deleted, 0);
  L.push(
    `  rows written        ${fmt(perStep(allRows), 2)} / step   (pg_stat_user_tables of this database; a backend reports its counts within about a second):`,
  );
  for (const [t, r] of written) {
    const parts = [`${fmt(perStep(r.inserted), 2)} inserted`, `${fmt(perStep(r.updated), 2)} updated (${fmt(perStep(r.hot), 2)} HOT)`];
    if (r.deleted) parts.push(`${fmt(perStep(r.deleted), 2)} deleted`);
    L.push(`    ${t.padEnd(22)} ${parts.join(', ')}`);
  }
  const redisTotal = [...cost.redis.values()].reduce((s, x) => s + x, 0) - cost.redisOwn;
  const scripts = (cost.redis.get('evalsha') ?? 0) + (cost.redis.get('eval') ?? 0);
  L.push(
    `  Redis commands      ${fmt(perStep(redisTotal), 1)} / step   (of which EVALSHA/EVAL ${fmt(perStep(scripts), 1)}; INFO commandstats, server-wide, also counts commands run inside scripts)`,
  );
  if (cost.foreignRedisClients) {
    L.push(
      `  !! ${cost.foreignRedisClients} Redis client(s) of other processes were active during the window: the Redis figures include their commands (--private-redis for exact ones)`,
    );
  }
  const cpuTotal = [...cost.cpu.values()].reduce((s, x) => s + x, 0);
  L.push(
    `  CPU                 ${fmt(perStep(cpuTotal) * 1000, 2)} ms / step in all; ${fmt((cpuTotal / cost.seconds) * 100, 0)}% of one core out of ${cpus().length * 100}%:`,
  );
  for (const l of table(
    ['process', 'CPU s', '% of a core', 'ms / step', 'share'],
    [...cost.cpu].map(([name, s]) => [name, fmt(s, 2), fmt((s / cost.seconds) * 100, 0), fmt(perStep(s) * 1000, 2), `${fmt((s / cpuTotal) * 100, 0)}%`]),
  ))
    L.push(`    ${l}`);
  if (stmts?.length) {
    L.push('  top statements (calls / step, mean ms):');
    for (const s of stmts.slice(0, 14)) L.push(`    ${fmt(perStep(s.calls), 2).padStart(6)}  ${fmt(s.totalMs / s.calls, 3).padStart(7)}  ${short(s.query)}`);
    const rest = stmts.slice(14);
    if (rest.length) L.push(`    ${fmt(perStep(sum(rest, (s) => s.calls)), 2).padStart(6)}           (${rest.length} other statements)`);
  }
  const cmds = [...cost.redis].sort((x, y) => y[1] - x[1]);
  L.push('  Redis commands (calls / step):');
  L.push(
    `    ${cmds
      .slice(0, 12)
      .map(([c, n]) => `${c} ${fmt(perStep(n), 2)}`)
      .join(' · ')}${cmds.length > 12 ? ' · …' : ''}`,
  );
  L.push('');

  const thr = stepsPerSec / r.pgb8.tps;
  const lat = soloMs / r.bull.soloHopMs;
  L.push('ratios and targets');
  for (const l of table(
    ['', 'ratio', 'target', ''],
    [
      ['weft steps/s ÷ pgbench commits/s (8 each)', fmt(thr, 3), `≥ ${THROUGHPUT_TARGET}`, verdict(thr >= THROUGHPUT_TARGET)],
      ['weft step alone ÷ raw Bull hop alone', fmt(lat, 2), `≤ ${LATENCY_TARGET}`, verdict(lat <= LATENCY_TARGET)],
      [
        'engine µs/event, 10,000 ÷ 100 nodes (worst shape)',
        r.engine ? fmt(r.engine.worstRatio, 2) : 'n/a',
        `≤ ${ENGINE_RATIO_TARGET}`,
        r.engine ? verdict(r.engine.met) : 'n/a (--no-engine)',
      ],
    ],
    true,
  ))
    L.push(`  ${l}`);
  if (r.engine)
    L.push(
      `  engine per shape: ${r.engine.ratios.map((x) => `${x.shape} ${fmt(x.ratio, 2)}`).join(', ')} (see the engine table above or bench/results/engine-latest.txt)`,
    );
  L.push(`  also: weft steps/s ÷ raw Bull hops/s (8 each) = ${fmt(stepsPerSec / r.bull.hopsPerSec, 3)}; stub hits ${r.stubHits}`);
  L.push(
    `  also: weft steps/s ÷ pgbench of a Weft step's transaction (8 each) = ${fmt(stepsPerSec / r.step8.tps, 3)}; ` +
      `weft step alone ÷ that transaction alone = ${fmt(soloMs / r.step1.latencyMs, 2)}; that transaction ÷ a single-row UPDATE (8 clients) = ${fmt(r.step8.tps / r.pgb8.tps, 3)}`,
  );
  // What the throughput target asks of the CPU, from this run's own figures.
  const budgetMs = (cpus().length * 1000) / (THROUGHPUT_TARGET * r.pgb8.tps);
  const outside = ['bench driver + stub', 'weft api', 'redis-server'].reduce((sum, n) => sum + (cost.cpu.get(n) ?? 0), 0);
  L.push(
    `  CPU budget: ${THROUGHPUT_TARGET} × pgbench on ${cpus().length} cores leaves ${fmt(budgetMs, 3)} ms of CPU per step in all; this run spent ${fmt(perStep(cpuTotal) * 1000, 2)} ms, ` +
      `of which ${fmt(perStep(outside) * 1000, 2)} ms in the stub and bench driver, the API (run starts) and Redis`,
  );
  return L;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
