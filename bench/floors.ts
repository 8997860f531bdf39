/**
 * The floors Weft is compared with, on the same PostgreSQL and Redis: pgbench running a
 * single-row UPDATE, and a raw Bull chain (each job's processor enqueues the next job).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Queue from 'bull';
import type pg from 'pg';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface PgbenchResult {
  clients: number;
  tps: number;
  latencyMs: number;
  transactions: number;
}

/** Creates `bench_counter` (`rows` rows) in the database `owner` is connected to. */
export async function createCounterTable(owner: pg.Client, rows: number): Promise<void> {
  await owner.query('DROP TABLE IF EXISTS bench_counter');
  await owner.query('CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0)');
  await owner.query('INSERT INTO bench_counter (id) SELECT g FROM generate_series(1, $1::int) g', [rows]);
  await owner.query('VACUUM ANALYZE bench_counter');
}

/**
 * Creates the tables of {@link STEP_SCRIPT} (`rows` runs, each with a task to complete) in the
 * database `owner` is connected to: a run row, a task table with as many indexes as Weft's
 * `tasks` (primary key, run + node, leases, by run), and a history table.
 */
export async function createStepTables(owner: pg.Client, rows: number): Promise<void> {
  await owner.query('DROP TABLE IF EXISTS bench_step_runs, bench_step_tasks, bench_step_events');
  await owner.query(`
    CREATE TABLE bench_step_runs (id int PRIMARY KEY, seq int NOT NULL DEFAULT 0, input jsonb NOT NULL DEFAULT '{}', updated_at timestamptz);
    CREATE TABLE bench_step_tasks (id bigserial PRIMARY KEY, run_id int NOT NULL, node_id text NOT NULL, status text NOT NULL,
                                   input jsonb, output jsonb, lease_expires_at timestamptz, created_at timestamptz, finished_at timestamptz);
    CREATE INDEX ON bench_step_tasks (run_id, node_id);
    CREATE INDEX ON bench_step_tasks (lease_expires_at) WHERE status = 'RUNNING';
    CREATE INDEX ON bench_step_tasks (run_id);
    CREATE TABLE bench_step_events (id bigserial PRIMARY KEY, run_id int NOT NULL, seq int NOT NULL, at timestamptz NOT NULL, payload jsonb);
    INSERT INTO bench_step_runs (id) SELECT g FROM generate_series(1, ${Number(rows)}) g;
    INSERT INTO bench_step_tasks (id, run_id, node_id, status) SELECT g, g, 'n0', 'RUNNING' FROM generate_series(1, ${Number(rows)}) g;
    SELECT setval('bench_step_tasks_id_seq', ${Number(rows)});
  `);
  await owner.query('VACUUM ANALYZE bench_step_runs');
  await owner.query('VACUUM ANALYZE bench_step_tasks');
}

/**
 * A Weft step's transaction without Weft (`-M prepared`, as Weft's statements are): BEGIN and
 * the tenant setting, the run row locked with the reported task read, then one statement
 * completing the task (its output), inserting the next task RUNNING with a lease, appending a
 * history row and bumping the run, then COMMIT. The writes of a step of the bench's chain when
 * the worker takes the next task; what PostgreSQL alone can do of them is the floor of Weft's
 * design (pgbench sends BEGIN and the setting as two round trips, Weft as one).
 */
export const STEP_SCRIPT = (rows: number) => `\\set r random(1, ${rows})
BEGIN;
SELECT set_config('app.tenant_id', 'bench', true);
WITH r AS MATERIALIZED (SELECT id, seq, input FROM bench_step_runs WHERE id = :r FOR UPDATE) SELECT r.seq, clock_timestamp(), t.status FROM r LEFT JOIN bench_step_tasks t ON t.id = :r;
WITH done AS (UPDATE bench_step_tasks SET status = 'COMPLETED', output = '{"ok": true}', finished_at = now() WHERE id = :r), next AS (INSERT INTO bench_step_tasks (run_id, node_id, status, input, lease_expires_at, created_at) VALUES (:r, 'n1', 'RUNNING', '{"url":"http://127.0.0.1/n1"}', now() + interval '15 s', now())), ev AS (INSERT INTO bench_step_events (run_id, seq, at, payload) VALUES (:r, 1, now(), '{"type":"NodeCompleted"}')) UPDATE bench_step_runs SET seq = seq + 1, updated_at = now() WHERE id = :r;
COMMIT;
`;

/**
 * `pgbench -n -c <clients> -j <threads> -T <seconds> -f <script>`, by default with
 * `UPDATE bench_counter SET n = n + 1 WHERE id = :id` over a random id among `rows`, against the
 * database of `ownerUrl`; `script` replaces it (run with `-M prepared`). Parses tps (without the
 * initial connection time) and the average latency.
 */
export async function pgbench(
  ownerUrl: string,
  dir: string,
  opts: { clients: number; seconds: number; rows: number; script?: string },
): Promise<PgbenchResult> {
  const script = join(dir, opts.script === undefined ? 'update.sql' : 'script.sql');
  writeFileSync(script, opts.script ?? `\\set id random(1, ${opts.rows})\nUPDATE bench_counter SET n = n + 1 WHERE id = :id;\n`);
  const u = new URL(ownerUrl);
  const args = [
    '-n',
    ...(opts.script === undefined ? [] : ['-M', 'prepared']),
    '-c',
    String(opts.clients),
    '-j',
    String(Math.min(2, opts.clients)),
    '-T',
    String(Math.max(1, Math.round(opts.seconds))),
    '-f',
    script,
    '-h',
    u.hostname,
    '-p',
    u.port || '5432',
    '-U',
    decodeURIComponent(u.username || 'postgres'),
    decodeURIComponent(u.pathname.slice(1)),
  ];
  const env = { ...process.env, ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}) };
  const { stdout } = await run('pgbench', args, { env, maxBuffer: 1 << 20 });
  const tps = stdout.match(/^tps = ([\d.]+) \(without initial connection time\)/m) ?? stdout.match(/^tps = ([\d.]+)/m);
  const lat = stdout.match(/^latency average = ([\d.]+) ms/m);
  const tx = stdout.match(/^number of transactions actually processed: (\d+)/m);
  if (!tps || !lat) throw new Error(`cannot read pgbench's output:\n${stdout}`);
  return { clients: opts.clients, tps: Number(tps[1]), latencyMs: Number(lat[1]), transactions: Number(tx?.[1] ?? 0) };
}

export interface BullFloor {
  /** Hops per second with `chains` chains going at once. */
  hopsPerSec: number;
  chains: number;
  /** Milliseconds per hop of one chain alone. */
  soloHopMs: number;
  soloHops: number;
}

interface HopJob {
  chain: number;
  hop: number;
}

/**
 * A raw Bull chain on queue `bench-raw-chain` under `prefix` (the same `bull` package, settings
 * and job options as Weft's BullTaskQueues): the processor (concurrency `concurrency`) adds the
 * next hop of its chain to the same queue and returns. First `chains` chains for `seconds` (after
 * a one-second warm-up): hops/s; then one chain alone: ms per hop.
 */
export async function bullFloor(redisUrl: string, prefix: string, opts: { chains: number; seconds: number; concurrency: number }): Promise<BullFloor> {
  const lockMs = 15_000;
  const q = new Queue<HopJob>('bench-raw-chain', redisUrl, {
    prefix,
    settings: { lockDuration: lockMs, lockRenewTime: lockMs / 3, stalledInterval: lockMs / 3, maxStalledCount: 2, retryProcessDelay: 1_000 },
  });
  q.on('error', () => undefined);
  let stopped = false;
  let hops = 0;
  let onHop: (job: HopJob) => void = () => {};
  const add = (job: HopJob) => q.add(job, { jobId: `${job.chain}:${job.hop}`, attempts: 1, removeOnComplete: true, removeOnFail: true });
  void q.process(opts.concurrency, async (job) => {
    hops++;
    onHop(job.data);
    if (!stopped) await add({ chain: job.data.chain, hop: job.data.hop + 1 });
  });
  const drain = async () => {
    stopped = true;
    for (let i = 0; i < 50; i++) {
      const c = await q.getJobCounts();
      if (c.active + c.waiting + c.delayed === 0) return;
      await sleep(100);
    }
  };

  try {
    await q.isReady();
    // Throughput: `chains` chains at once.
    for (let c = 0; c < opts.chains; c++) await add({ chain: c, hop: 0 });
    await sleep(1_000);
    const h0 = hops;
    const t0 = performance.now();
    await sleep(opts.seconds * 1000);
    const hopsPerSec = ((hops - h0) * 1000) / (performance.now() - t0);
    await drain();

    // Latency: one chain alone, timed from hop `warm` to hop `warm + n` (n as many as fit in half the phase).
    stopped = false;
    const warm = 50;
    const budgetMs = Math.max(1_000, (opts.seconds * 1000) / 2);
    const solo = await new Promise<{ ms: number; n: number }>((resolve) => {
      let tWarm = 0;
      onHop = (job) => {
        if (job.chain !== -1) return;
        if (job.hop === warm) tWarm = performance.now();
        else if (job.hop > warm && performance.now() - tWarm >= budgetMs) {
          onHop = () => {};
          resolve({ ms: (performance.now() - tWarm) / (job.hop - warm), n: job.hop - warm });
        }
      };
      void add({ chain: -1, hop: 0 });
    });
    await drain();
    return { hopsPerSec, chains: opts.chains, soloHopMs: solo.ms, soloHops: solo.n };
  } finally {
    stopped = true;
    await q.obliterate({ force: true }).catch(() => undefined);
    await q.close().catch(() => undefined);
  }
}
