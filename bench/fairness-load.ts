/**
 * The load of `npm run bench:fairness` and what it reads back: the two workflows (a two-step
 * chain on the shared `http` queue; a `for_each` of HTTP calls under a node rate limit), tenant
 * A's flood of runs (a fixed number in flight), tenant B's runs started at a fixed interval, and
 * the figures read from the database as its owner (the runs' and tasks' own timestamps, the
 * rate-limit starts).
 */
import type pg from 'pg';
import type { WeftClient } from '@weft/client';
import type { RunWatcher } from './weft.js';

export const PAIR_WORKFLOW = 'fair-pair';
export const PARTNER_WORKFLOW = 'fair-partner';
/** Steps of a pair run. */
export const PAIR_STEPS = 2;
/** The partner's rate limit: at most this many starts per second. */
export const PARTNER_LIMIT = 20;

/** s1 → s2, each an HTTP GET of `<config.stub>/pair/<tenant>/s<i>` on the default `http` queue. */
export function pairDefinition(): Record<string, unknown> {
  const node = (i: number) => ({
    node_id: `s${i}`,
    type: 'HTTP',
    spec: { url: `{{config.stub}}/pair/{{config.tenant}}/s${i}`, method: 'GET', timeout_seconds: 10 },
  });
  return { name: 'Bench: two HTTP steps in a chain', nodes: [node(1), node(2)], edges: [{ from: 's1', to: 's2' }] };
}

/** One HTTP GET of `<config.stub>/partner?i=<item>` per element of `input.items`, rate-limited under key `partner`. */
export function partnerDefinition(): Record<string, unknown> {
  return {
    name: 'Bench: a for_each of HTTP calls under a rate limit',
    nodes: [
      {
        node_id: 'call',
        type: 'HTTP',
        for_each: '{{input.items}}',
        rate_limit: { key: 'partner', limit: PARTNER_LIMIT, per_seconds: 1 },
        spec: { url: '{{config.stub}}/partner?i={{item}}', method: 'GET', timeout_seconds: 10 },
      },
    ],
    edges: [],
  };
}

export async function publish(client: WeftClient, workflowId: string, definition: Record<string, unknown>): Promise<void> {
  await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
    i: { workflowId, definition: JSON.stringify(definition) },
  });
}

/** Starts a run of `workflowId`; resolves its id (lower case). */
export async function startRun(client: WeftClient, workflowId: string, input: unknown, config: unknown): Promise<string> {
  const r = await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId, input, config } });
  return String(r.startRun.id).toLowerCase();
}

/** A tenant's side of the bench: its client, its run watcher and the config its runs get. */
export interface Driver {
  client: WeftClient;
  watcher: RunWatcher;
  config: { stub: string; tenant: string };
}

/** What {@link flood} did: the run ids, when the first start was sent and the last one accepted (performance.now(), ms), and when all had ended. */
export interface Flood {
  ids: string[];
  firstSentAt: number;
  lastAcceptedAt: number;
  endedAt: number;
  failedStarts: string[];
  statuses: Record<string, number>;
}

/**
 * Starts `runs` pair runs with `inFlight` start requests outstanding at any time (each lane sends
 * its next as soon as the previous was accepted), then waits until every run ended.
 */
export async function flood(d: Driver, runs: number, inFlight: number): Promise<Flood> {
  const ids: string[] = [];
  const ends: Promise<string>[] = [];
  const failedStarts: string[] = [];
  let next = 0;
  let lastAcceptedAt = 0;
  const firstSentAt = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(inFlight, runs) }, async () => {
      while (next < runs) {
        const i = next++;
        try {
          const id = await startRun(d.client, PAIR_WORKFLOW, { i }, d.config);
          lastAcceptedAt = performance.now();
          ids.push(id);
          ends.push(d.watcher.wait(id));
        } catch (err) {
          failedStarts.push((err as Error).message);
        }
      }
    }),
  );
  const statuses = count(await Promise.all(ends));
  return { ids, firstSentAt, lastAcceptedAt, endedAt: performance.now(), failedStarts, statuses };
}

/** What {@link every} did: the run ids and how late each start was sent after its due time (ms). */
export interface Ticks {
  ids: string[];
  failedStarts: string[];
  statuses: Record<string, number>;
  /** The most a start was sent after its due time, ms (the bench's own event loop). */
  lateMs: number;
}

/**
 * Starts a pair run every `intervalMs` (on a fixed schedule, not waiting for the previous one)
 * until `until()` is true, then waits for every run to end.
 */
export async function every(d: Driver, intervalMs: number, until: () => boolean): Promise<Ticks> {
  const starts: Promise<string | undefined>[] = [];
  const failedStarts: string[] = [];
  const t0 = performance.now();
  let lateMs = 0;
  for (let k = 0; !until(); k++) {
    const due = t0 + k * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    if (until()) break;
    lateMs = Math.max(lateMs, performance.now() - due);
    starts.push(
      startRun(d.client, PAIR_WORKFLOW, { k }, d.config).catch((err: unknown) => {
        failedStarts.push((err as Error).message);
        return undefined;
      }),
    );
  }
  const ids = (await Promise.all(starts)).filter((id): id is string => id !== undefined);
  const statuses = count(await Promise.all(ids.map((id) => d.watcher.wait(id))));
  return { ids, failedStarts, statuses, lateMs };
}

/** Each run's duration and its first creation and last end, by the database's clock (ms since the epoch, µs precision). */
export interface RunTimes {
  /** (finished_at − created_at) / steps, per run. */
  perStepMs: number[];
  firstCreatedMs: number;
  lastFinishedMs: number;
  succeeded: number;
}

export async function runTimes(owner: pg.Client, tenantId: string, ids: string[], steps: number): Promise<RunTimes> {
  const r = await owner.query<{ status: string; created: number; finished: number | null }>(
    `SELECT status, extract(epoch FROM created_at) * 1000 AS created, extract(epoch FROM finished_at) * 1000 AS finished
       FROM runs WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
    [tenantId, ids],
  );
  const rows = r.rows.map((x) => ({ status: x.status, created: Number(x.created), finished: x.finished === null ? NaN : Number(x.finished) }));
  return {
    perStepMs: rows.map((x) => (x.finished - x.created) / steps),
    firstCreatedMs: Math.min(...rows.map((x) => x.created)),
    lastFinishedMs: Math.max(...rows.map((x) => x.finished).filter(Number.isFinite)),
    succeeded: rows.filter((x) => x.status === 'SUCCEEDED').length,
  };
}

/**
 * Where the time of a set of runs' steps went, by their tasks' timestamps (ms): a task taken at
 * once by the worker that reported its predecessor (eager dispatch, no backlog row), or one that
 * waited in the backlog (`admitMs`: backlog row ready → admitted) and then in Bull, ran and was
 * reported (`admittedToEndMs`: admitted → task finished).
 */
export interface StepPath {
  tasks: number;
  eager: number;
  /** Tasks that had a backlog row: ms from the row ready to its admission. */
  admitMs: number[];
  /** Tasks that had a backlog row: ms from admission to the task's end. */
  admittedToEndMs: number[];
  /** Tasks taken eagerly: ms from the task's creation to its end. */
  eagerSpanMs: number[];
  /** Runs: ms from the run's creation to its first task's creation. */
  firstTaskMs: number[];
  /** Runs: ms from the last task's end to the run's end. */
  tailMs: number[];
}

export async function stepPath(owner: pg.Client, tenantId: string, ids: string[]): Promise<StepPath> {
  const r = await owner.query<{
    created: number;
    finished: number;
    ready: number | null;
    admitted: number | null;
    run_created: number;
    run_finished: number;
    node_id: string;
    run_id: string;
  }>(
    `SELECT t.run_id, t.node_id,
            extract(epoch FROM t.created_at) * 1000 AS created, extract(epoch FROM t.finished_at) * 1000 AS finished,
            extract(epoch FROM greatest(o.created_at, o.not_before)) * 1000 AS ready, extract(epoch FROM o.enqueued_at) * 1000 AS admitted,
            extract(epoch FROM r.created_at) * 1000 AS run_created, extract(epoch FROM r.finished_at) * 1000 AS run_finished
       FROM tasks t
       JOIN runs r ON r.tenant_id = t.tenant_id AND r.id = t.run_id
       LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
      WHERE t.tenant_id = $1 AND t.run_id = ANY($2::uuid[])`,
    [tenantId, ids],
  );
  const p: StepPath = { tasks: r.rows.length, eager: 0, admitMs: [], admittedToEndMs: [], eagerSpanMs: [], firstTaskMs: [], tailMs: [] };
  for (const x of r.rows) {
    if (x.admitted === null) {
      p.eager++;
      p.eagerSpanMs.push(Number(x.finished) - Number(x.created));
    } else {
      p.admitMs.push(Number(x.admitted) - Number(x.ready));
      p.admittedToEndMs.push(Number(x.finished) - Number(x.admitted));
    }
    if (x.node_id === 's1') p.firstTaskMs.push(Number(x.created) - Number(x.run_created));
    if (x.node_id === 's2') p.tailMs.push(Number(x.run_finished) - Number(x.finished));
  }
  return p;
}

/** The starts `flow_rate_starts` holds for the tenant, ms since the epoch, in order (the database's clock). */
export async function rateStarts(owner: pg.Client, tenantId: string): Promise<number[]> {
  const r = await owner.query<{ at: number }>(
    `SELECT extract(epoch FROM started_at) * 1000 AS at FROM flow_rate_starts WHERE tenant_id = $1 ORDER BY started_at`,
    [tenantId],
  );
  return r.rows.map((x) => Number(x.at));
}

/** The most of `times` (ms, any order) within any window [t, t + windowMs). */
export function maxInWindow(times: number[], windowMs: number): number {
  const s = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < s.length; j++) {
    while (s[j]! - s[i]! >= windowMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

/** Starts per second: (n − 1) intervals over the first-to-last span of `times` (ms). */
export function achievedRate(times: number[]): number {
  if (times.length < 2) return NaN;
  return ((times.length - 1) * 1000) / (Math.max(...times) - Math.min(...times));
}

export function count(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The rate-limited run's starts by the database's clock beside their calls' arrivals at the stub, by element. */
export async function rateLags(owner: pg.Client, tenantId: string, arrivals: ReadonlyMap<number, number>): Promise<number[]> {
  const r = await owner.query<{ iteration: number; at: number }>(
    `SELECT t.iteration, extract(epoch FROM s.started_at) * 1000 AS at
       FROM flow_rate_starts s JOIN tasks t ON t.tenant_id = s.tenant_id AND t.id = s.task_id
      WHERE s.tenant_id = $1`,
    [tenantId],
  );
  return r.rows.flatMap((x) => {
    const arrived = arrivals.get(Number(x.iteration));
    return arrived === undefined ? [] : [arrived - Number(x.at)];
  });
}

/** One reading of a queue: its backlog (ready rows), its admitted attempts not yet claimed (in Bull) and those running. */
export interface QueueSample {
  backlog: number;
  pending: number;
  running: number;
}

/** Reads `queue`'s {@link QueueSample} every `intervalMs` until the returned function is called; that resolves the readings. */
export function sampleQueue(owner: pg.Client, queue: string, intervalMs: number): () => Promise<QueueSample[]> {
  const samples: QueueSample[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const r = await owner.query<{ backlog: number; pending: number; running: number }>(
        `SELECT (SELECT count(*) FROM outbox WHERE queue = $1 AND enqueued_at IS NULL AND hold_reason IS NULL)::int AS backlog,
                count(*) FILTER (WHERE status = 'PENDING')::int AS pending, count(*) FILTER (WHERE status = 'RUNNING')::int AS running
           FROM tasks WHERE queue = $1 AND status IN ('PENDING', 'RUNNING')`,
        [queue],
      );
      samples.push(r.rows[0]!);
      await sleep(intervalMs);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return samples;
  };
}

/**
 * The dispatch passes that admitted rows of `queue` between `fromMs` and `toMs` (the database's
 * clock): every row one `weft_dispatch` call admits gets the same `enqueued_at`, so each distinct
 * value is one pass. Resolves the rows each admitted and the gaps between consecutive ones, ms.
 */
export async function admittingPasses(owner: pg.Client, queue: string, fromMs: number, toMs: number): Promise<{ rows: number[]; gapsMs: number[] }> {
  const r = await owner.query<{ at: number; rows: number }>(
    `SELECT extract(epoch FROM enqueued_at) * 1000 AS at, count(*)::int AS rows FROM outbox
      WHERE queue = $1 AND enqueued_at BETWEEN to_timestamp($2 / 1000.0) AND to_timestamp($3 / 1000.0)
      GROUP BY enqueued_at ORDER BY enqueued_at`,
    [queue, fromMs, toMs],
  );
  const at = r.rows.map((x) => Number(x.at));
  return { rows: r.rows.map((x) => x.rows), gapsMs: at.slice(1).map((t, i) => t - at[i]!) };
}
