/**
 * Weft in the peers bench, in either of its two shapes: `weft api`, `weft worker` and
 * `weft scheduler` as separate processes (started as `npm run bench` starts them, with chaos's
 * `WeftProcess`), or `weft dev`, the whole platform in one process. Each run gets its own
 * database `weft_peers_<hex>` (`weft migrate`, a tenant) and Bull keys `weft:<database>:*`, both
 * dropped at the end unless `keep`. The workflow is bench/weft.ts's chain, keyed so that the stub
 * tells the runs apart; runs are started over the GraphQL API and their end is learnt from the
 * coordinator's run-update channel, as in `npm run bench`.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { WeftClient } from '../libs/client/src/index.js';
import { WeftProcess, dropInstallation, freePort, provisionTenant, weftEnv, withDb, type UnexpectedExit } from '../chaos/processes.js';
import { StubProcess } from './peer-children.js';
import { Problems, checkCount, checkResults, checkStub, expectedBody } from './peer-check.js';
import { fromWorkload, type EngineResult } from './peer-result.js';
import { nonLoopbackPeers } from './peer-sockets.js';
import { followRun } from './peer-watch.js';
import { CHAIN_STEPS, IN_FLIGHT, keyPrefix, runWorkload, type EngineDriver, type WorkflowRecord } from './peer-workload.js';
import { PgCounters, foreignActiveClients, redisPid } from './stats.js';
import { RunWatcher, WORKFLOW_ID, chainDefinition, readRunOutputs, startRun, waitForApi } from './weft.js';

const RUNTIME_ROLE = 'weft_app';

export interface WeftPeerOptions {
  mode: 'processes' | 'dev';
  /** Every run followed by a runUpdated subscriber with the CLI's watch selection (bench/peer-watch.ts). */
  watched?: boolean;
  /** The repository root (dist/ holds the built CLI). */
  root: string;
  seconds: number;
  soloRuns: number;
  /** PostgreSQL superuser URL without a database. */
  postgres: string;
  redis: string;
  keep: boolean;
  /** Where the logs go (a folder per mode is made in it). */
  work: string;
  say: (line: string) => void;
  interrupted: () => boolean;
}

/** The PostgreSQL and Redis settings Weft's durability depends on, as the servers have them. */
async function durability(owner: pg.Client, redis: Redis): Promise<string[]> {
  const show = async (name: string) => String(Object.values((await owner.query(`SHOW ${name}`)).rows[0])[0]);
  const conf = async (name: string) => String(((await redis.call('CONFIG', 'GET', name)) as string[])[1] ?? '?');
  return [
    `PostgreSQL ${await show('server_version')}: synchronous_commit = ${await show('synchronous_commit')}, fsync = ${await show('fsync')}, wal_sync_method = ${await show('wal_sync_method')}, full_page_writes = ${await show('full_page_writes')} (SHOW, the server's own settings; Weft sets none of them and the bench changes none)`,
    "each step's report (task completed, its output, the next task, history) is one PostgreSQL transaction, committed before the next task is dispatched; source: docs/ARCHITECTURE.md §4, the coordinator's transaction",
    `Redis (Bull) only carries jobs, the source of truth is PostgreSQL; the shared redis-server has appendonly = ${await conf('appendonly')}, save = "${await conf('save')}" (CONFIG GET)`,
  ];
}

/** Runs the workload on Weft in `o.mode`; never throws for a failed check (see `problems`). */
export async function runWeft(o: WeftPeerOptions): Promise<EngineResult> {
  const label = o.mode === 'dev' ? (o.watched ? 'weft-dev-watched' : 'weft-dev') : o.watched ? 'weft-watched' : 'weft';
  const version = weftVersion(o.root);
  const say = (l: string) => o.say(`${label}: ${l}`);
  const cli = join(o.root, 'dist/apps/cli/src/main.js');
  const dbName = `weft_peers_${randomBytes(4).toString('hex')}`;
  const ownerUrl = withDb(o.postgres, dbName);
  const prefix = `weft:${dbName}`;
  const logDir = join(o.work, label);
  mkdirSync(logDir, { recursive: true });
  const env = weftEnv(withDb(o.postgres, dbName, RUNTIME_ROLE), ownerUrl, o.redis, { WEFT_LOG_LEVEL: process.env.WEFT_LOG_LEVEL ?? 'warn' });
  const redis = new Redis(o.redis, { maxRetriesPerRequest: 3 });
  redis.on('error', () => undefined);
  const procs: WeftProcess[] = [];
  const unexpected: UnexpectedExit[] = [];
  let owner: pg.Client | undefined;
  let stub: StubProcess | undefined;
  let watcher: RunWatcher | undefined;
  let api: WeftClient | undefined;
  /** The subscriptions of the watched runs still under way, to end at the end. */
  const following = new Set<() => void>();
  let created = false;
  say(`database ${dbName}, Redis keys ${prefix}:*`);
  try {
    created = true;
    const { tenantId, apiKey } = await provisionTenant(cli, env, 'peers');
    owner = new pg.Client({ connectionString: ownerUrl, application_name: 'weft-peers-bench' });
    await owner.connect();
    const counters = new PgCounters(owner, dbName, RUNTIME_ROLE, false);
    stub = await StubProcess.start(join(logDir, 'stub.log'));
    const port = await freePort();
    const t0 = performance.now();
    const start = (name: string, args: string[]) => {
      const p = new WeftProcess(
        name,
        cli,
        args,
        env,
        logDir,
        () => Math.round(performance.now() - t0),
        (e) => {
          if (o.interrupted()) return; // the Ctrl-C reached it too
          unexpected.push(e);
          say(`!! ${e.name} exited on its own (code ${e.code}, signal ${e.signal})`);
        },
      );
      procs.push(p);
      p.start();
      return p;
    };
    if (o.mode === 'dev') start('dev', ['dev', '--port', String(port)]);
    else {
      start('api', ['api', '--port', String(port), '--host', '127.0.0.1']);
      start('worker', ['worker']);
      start('scheduler', ['scheduler']);
    }
    const check = () => {
      if (o.interrupted()) throw new Error('interrupted');
      if (unexpected.length)
        throw new Error(`weft ${unexpected[0].name} exited on its own (code ${unexpected[0].code}); see ${logDir}/${unexpected[0].name}.log`);
    };
    const client = (api = new WeftClient(`http://127.0.0.1:${port}/graphql`, apiKey));
    await waitForApi(client, check, 'the Weft API');
    await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
      i: { workflowId: WORKFLOW_ID, definition: JSON.stringify(chainDefinition({ keyed: true })) },
    });
    watcher = new RunWatcher(o.redis, tenantId, client);
    await watcher.start();
    const w8 = watcher;
    const st = stub;
    const rPid = await redisPid(redis);
    const weftPids = () => procs.flatMap((p) => (p.pid ? [p.pid] : []));
    say(`up (${procs.map((p) => `${p.name} pid ${p.pid}`).join(', ')}); stub ${stub.url}`);

    let seq = 0;
    let followed = 0;
    let outside: string[] = [];
    let foreignRedis = 0;
    let windowEnd = 0;
    const driver: EngineDriver = {
      async run(key) {
        const id = await startRun(client, st.url, seq++, key);
        const follow = o.watched ? followRun(client, id) : undefined;
        if (follow) following.add(follow.dispose);
        try {
          const status = await w8.wait(id);
          if (status !== 'SUCCEEDED') throw new Error(`run ${id} ended ${status}`);
          if (follow) {
            const seen = await follow.done;
            if (seen.status !== 'SUCCEEDED') throw new Error(`run ${id}: its runUpdated subscriber saw it end ${seen.status || 'never'}`);
            followed++;
          }
        } finally {
          if (follow) following.delete(follow.dispose);
        }
        return { ref: id };
      },
      async processes() {
        outside = [...new Set([...outside, ...nonLoopbackPeers([...weftPids(), process.pid])])];
        windowEnd = Date.now();
        return new Map([
          ...procs.map((p): [string, number[]] => [`weft ${p.name}`, p.pid ? [p.pid] : []]),
          ['postgres (this db + background)', await counters.backendPids()],
          ['redis-server (shared)', rPid ? [rPid] : []],
          ['driver (bench process)', [process.pid]],
          ['stub (node)', st.pid ? [st.pid] : []],
        ]);
      },
      afterWarmup: async () => {
        await owner!.query('ANALYZE');
      },
      afterWindow: async () => {
        foreignRedis = await foreignActiveClients(redis, [process.pid, ...weftPids()], Math.ceil((Date.now() - windowEnd) / 1000) + o.seconds);
      },
      check,
    };
    const w = await runWorkload(driver, { seconds: o.seconds, soloRuns: o.soloRuns, prefix: keyPrefix(label), say });
    const durable = await durability(owner, redis);

    // Checks, outside every timed phase: every run's tasks over the API, the stub, the database.
    say(`checking ${w.records.length} runs over the API…`);
    const p = new Problems();
    checkResults(w.records, p);
    const withRef = w.records.filter((r) => r.ref);
    for (let i = 0; i < withRef.length; i += IN_FLIGHT) {
      await Promise.all(withRef.slice(i, i + IN_FLIGHT).map((r) => checkRun(client, r, p)));
    }
    const counts = await stub.counts(w.window.from, w.window.to);
    checkStub(w.records, counts, p);
    const ok = w.records.filter((r) => !r.error).length;
    const runs = (await owner.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM runs GROUP BY status`)).rows;
    checkCount(
      'runs SUCCEEDED (table runs)',
      ok,
      runs.filter((r) => r.status === 'SUCCEEDED').reduce((s, r) => s + r.n, 0),
      p,
    );
    for (const r of runs.filter((x) => x.status !== 'SUCCEEDED')) p.add(`table runs holds ${r.n} run(s) in status ${r.status}`);
    const tasks = (
      await owner.query<{ done: number; n: number }>(`SELECT count(*) FILTER (WHERE status = 'COMPLETED')::int AS done, count(*)::int AS n FROM tasks`)
    ).rows[0];
    checkCount('tasks COMPLETED (table tasks)', ok * CHAIN_STEPS, tasks.done, p);
    checkCount('tasks in all (table tasks)', ok * CHAIN_STEPS, tasks.n, p);
    const inWindow = (
      await owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE status = 'COMPLETED' AND finished_at >= $1 AND finished_at < $2`, [
        new Date(w.window.from),
        new Date(w.window.to),
      ])
    ).rows[0].n;
    if (outside.length) p.add(`Weft or the bench held sockets to addresses outside 127.0.0.0/8: ${outside.join(', ')}`);

    const notes: string[] = [];
    if (o.watched) notes.push(`${followed} run(s) followed to their end by a runUpdated subscriber`);
    if (w8.fallbackPolls)
      notes.push(`${w8.fallbackPolls} run(s) were polled over the API because the run-update channel did not announce their end within 10 s`);
    const restarts = procs.filter((x) => x.starts > 1);
    if (restarts.length) notes.push(`restarted after exiting on their own: ${restarts.map((x) => `${x.name} ×${x.starts - 1}`).join(', ')}`);
    return {
      engine: `${o.mode === 'dev' ? 'Weft (weft dev' : 'Weft (processes'}${o.watched ? ', watched)' : ')'}`,
      version: `weft ${version}`,
      setup: [
        o.mode === 'dev'
          ? 'weft dev: API, a worker for every queue and the scheduler in one process'
          : 'weft api, weft worker, weft scheduler as separate processes (as npm run bench starts them)',
        ...(o.watched
          ? [
              `every run watched from its start by a runUpdated subscriber over graphql-ws (one socket, the driver's), selecting the CLI's WATCH_FIELDS; the driver still learns a run's end from the run-update channel`,
            ]
          : []),
        `database ${dbName} (weft migrate, a tenant), Bull keys ${prefix}:* on the shared Redis; runs started over the GraphQL API (startRun), their end learnt from the run-update channel (Redis pub/sub); steps are HTTP nodes doing GET <stub>/n<i>?wf=<key> (the worker's undici client)`,
        `sockets to non-loopback addresses held by Weft's processes and the driver, read from /proc at both ends of the window: ${outside.length ? outside.join(', ') : 'none'}`,
        `redis-server is shared with the rest of the machine: its CPU counts everyone's commands${foreignRedis ? `, and ${foreignRedis} Redis client(s) of other processes were active during the window` : ''}`,
      ],
      durability: durable,
      notes,
      ...fromWorkload(w),
      windowSteps: inWindow,
      windowStepsSource: 'table tasks: rows COMPLETED with finished_at in the window',
      stubHitsInWindow: counts.inRange,
      checks: [
        `every run SUCCEEDED, and its tasks read over the API (run(id) { tasks { output } }): n1…n${CHAIN_STEPS} COMPLETED in order, each output the stub's body for that run and step`,
        'the stub saw each (workflow, step) exactly once',
        `table runs: every run SUCCEEDED; table tasks: ${CHAIN_STEPS} COMPLETED tasks per run and no other`,
      ],
      problems: p.done(),
    };
  } finally {
    for (const dispose of following) dispose();
    await api?.close().catch(() => undefined);
    watcher?.close();
    await Promise.allSettled(procs.map((x) => x.stop()));
    await stub?.stop();
    await owner?.end().catch(() => undefined);
    if (created) await dropWeftInstallation(o, dbName, prefix, redis, logDir, say);
    redis.disconnect();
  }
}

/** Checks one run's tasks as the API reports them against the stub's bodies. */
async function checkRun(client: WeftClient, r: WorkflowRecord, p: Problems): Promise<void> {
  let run;
  try {
    run = await readRunOutputs(client, r.ref!);
  } catch (err) {
    p.add(`run ${r.ref} (workflow ${r.key}): reading it over the API failed: ${(err as Error).message}`);
    return;
  }
  if (run.status !== 'SUCCEEDED') p.add(`run ${r.ref} (workflow ${r.key}) is ${run.status}`);
  if (run.tasks.length !== CHAIN_STEPS) p.add(`run ${r.ref} (workflow ${r.key}) has ${run.tasks.length} tasks, expected ${CHAIN_STEPS}`);
  let previous = -Infinity;
  for (let i = 1; i <= CHAIN_STEPS; i++) {
    const t = run.tasks.find((x) => x.nodeId === `n${i}`);
    if (!t || t.status !== 'COMPLETED') {
      p.add(`run ${r.ref} (workflow ${r.key}): task n${i} is ${t ? t.status : 'missing'}`);
      return;
    }
    // An HTTP node's output is the parsed response body (a status outside 2xx fails the task).
    if (!isDeepStrictEqual(t.output, expectedBody(r.key, i))) {
      p.add(
        `run ${r.ref} (workflow ${r.key}): task n${i} output is ${JSON.stringify(t.output).slice(0, 200)}, expected the stub's body ${JSON.stringify(expectedBody(r.key, i))}`,
      );
      return;
    }
    const finished = t.finishedAt ? Date.parse(t.finishedAt) : NaN;
    if (!(finished >= previous)) {
      p.add(`run ${r.ref} (workflow ${r.key}): task n${i} finished at ${t.finishedAt}, before n${i - 1}`);
      return;
    }
    previous = finished;
  }
}

/** Drops the database and its Redis keys (unless `keep`); reports what it did. */
async function dropWeftInstallation(o: WeftPeerOptions, dbName: string, prefix: string, redis: Redis, logDir: string, say: (l: string) => void): Promise<void> {
  if (o.keep) {
    say(`kept database ${dbName}, Redis keys ${prefix}:* and the logs in ${logDir}`);
    return;
  }
  try {
    const deleted = await dropInstallation(o.postgres, dbName, redis, prefix, 'weft-peers-bench');
    say(`dropped database ${dbName} and ${deleted} Redis key${deleted === 1 ? '' : 's'}`);
  } catch (err) {
    say(`!! cleanup failed: ${(err as Error).message} (database ${dbName}, Redis keys ${prefix}:*)`);
  }
}

/** The version in the repository's package.json, the commit, and whether libs/ or apps/ had uncommitted changes (dist/ is built from the working tree). */
function weftVersion(root: string): string {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  try {
    const git = (args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    const dirty = git(['status', '--porcelain', '--', 'libs', 'apps']) !== '';
    return `${version}, commit ${git(['rev-parse', '--short', 'HEAD'])}${dirty ? ' with uncommitted changes in libs/ or apps/' : ''}`;
  } catch {
    return version;
  }
}
