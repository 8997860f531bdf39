/**
 * Weft end to end: the benchmark workflow, the HTTP stub its nodes call, and a watcher that
 * learns when runs end from the coordinator's run-update channel — so waiting for runs adds no
 * SQL, unlike polling `run(id)` or a `runUpdated` subscription (each re-reads the run), and the
 * cost model counts Weft's own work only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { WeftClient } from '../libs/client/src/index.js';

export const WORKFLOW_ID = 'bench-chain';
export const CHAIN_LENGTH = 20;
const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
/** The coordinator's run-update channel (libs/platform RUN_UPDATED_CHANNEL). */
const RUN_UPDATED_CHANNEL = 'weft.run-updated';

/**
 * n1 → n2 → … → n20, each an HTTP GET of `<config.stub>/n<i>`; with `keyed`, of
 * `<config.stub>/n<i>?wf=<input.key>`, so that a stub can tell the runs apart (bench:peers).
 */
export function chainDefinition(opts: { keyed?: boolean } = {}): Record<string, unknown> {
  const query = opts.keyed ? '?wf={{input.key}}' : '';
  const nodes = Array.from({ length: CHAIN_LENGTH }, (_, i) => ({
    node_id: `n${i + 1}`,
    type: 'HTTP',
    spec: { url: `{{config.stub}}/n${i + 1}${query}`, method: 'GET', timeout_seconds: 10 },
  }));
  const edges = Array.from({ length: CHAIN_LENGTH - 1 }, (_, i) => ({ from: `n${i + 1}`, to: `n${i + 2}` }));
  return { name: 'Bench: 20 HTTP nodes in a chain', nodes, edges };
}

/**
 * A local HTTP server that answers every request 200 `{}` at once; `onRequest`, when given, is
 * told each request's URL (path and query) and its arrival (`performance.now()`, ms).
 */
export class Stub {
  hits = 0;
  private server?: Server;

  constructor(private readonly onRequest?: (url: string, at: number) => void) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.hits++;
      this.onRequest?.(req.url ?? '', performance.now());
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}'));
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/**
 * Resolves `ended(runId)` when the run-update channel announces the run in a terminal status.
 * The coordinator publishes after each commit, best effort: a run not announced within
 * `fallbackMs` is polled over the API once per `fallbackMs` (counted in `fallbackPolls`).
 */
export class RunWatcher {
  private readonly sub: Redis;
  private readonly waiting = new Map<string, (status: string) => void>();
  private readonly ended = new Map<string, string>();
  fallbackPolls = 0;

  constructor(
    redisUrl: string,
    private readonly tenantId: string,
    private readonly client: WeftClient,
    private readonly fallbackMs = 10_000,
  ) {
    this.sub = new Redis(redisUrl, { maxRetriesPerRequest: null });
    this.sub.on('error', () => undefined);
    this.sub.on('message', (_channel: string, msg: string) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(msg);
      } catch {
        return;
      }
      // A message is an array of updates (one per run since the previous message).
      for (const u of Array.isArray(parsed) ? parsed : [parsed]) {
        const m = u as { tenantId?: string; runId?: string; status?: string };
        if (m?.tenantId !== this.tenantId || !m.runId || !m.status || !TERMINAL.has(m.status)) continue;
        const id = m.runId.toLowerCase();
        this.ended.set(id, m.status);
        this.waiting.get(id)?.(m.status);
      }
    });
  }

  async start(): Promise<void> {
    await this.sub.subscribe(RUN_UPDATED_CHANNEL);
  }

  /** The run's terminal status. */
  wait(runId: string): Promise<string> {
    const id = runId.toLowerCase();
    const known = this.ended.get(id);
    if (known) return Promise.resolve(known);
    return new Promise<string>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (status: string) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        this.ended.delete(id);
        resolve(status);
      };
      this.waiting.set(id, done);
      const poll = async () => {
        this.fallbackPolls++;
        try {
          const r = await this.client.request(`query($id: ID!) { run(id: $id) { status } }`, { id });
          if (TERMINAL.has(r.run.status)) return done(r.run.status);
        } catch {
          // try again later
        }
        if (this.waiting.get(id) === done) timer = setTimeout(poll, this.fallbackMs);
      };
      timer = setTimeout(poll, this.fallbackMs);
    });
  }

  close(): void {
    this.sub.disconnect();
  }
}

/**
 * Waits until the API behind `client` answers (every 250 ms, up to 60 s); `check` runs between
 * tries and throws to give up early (a process exited).
 * @throws Error naming `what` when it did not answer in time.
 */
export async function waitForApi(client: WeftClient, check: () => void, what: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await client.request('{ __typename }');
      return;
    } catch (err) {
      check();
      if (i > 240) throw new Error(`${what} did not answer within 60 s: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Starts a run of the bench workflow over the API (input `{i}`, or `{i, key}` with `key`); resolves its id. */
export async function startRun(client: WeftClient, stubUrl: string, i: number, key?: string): Promise<string> {
  const r = await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, {
    i: { workflowId: WORKFLOW_ID, input: key === undefined ? { i } : { i, key }, config: { stub: stubUrl } },
  });
  return String(r.startRun.id).toLowerCase();
}

/** A run as the API reports it, with its tasks' timestamps. */
export interface TimedRun {
  id: string;
  status: string;
  createdAt: string;
  finishedAt: string | null;
  tasks: { nodeId: string; status: string; createdAt: string; finishedAt: string | null }[];
}

export async function readRun(client: WeftClient, id: string): Promise<TimedRun> {
  const r = await client.request(`query($id: ID!) { run(id: $id) { id status createdAt finishedAt tasks { nodeId status createdAt finishedAt } } }`, { id });
  return r.run as TimedRun;
}

/** A run's status and its tasks' outputs, as the API reports them. */
export interface RunOutputs {
  id: string;
  status: string;
  tasks: { nodeId: string; status: string; output: unknown; finishedAt: string | null }[];
}

export async function readRunOutputs(client: WeftClient, id: string): Promise<RunOutputs> {
  const r = await client.request(`query($id: ID!) { run(id: $id) { id status tasks { nodeId status output finishedAt } } }`, { id });
  return r.run as RunOutputs;
}

/** Per-step figures of runs that ran alone, from their own timestamps (ms). */
export interface SoloFigures {
  /** (finishedAt − createdAt) / 20 per run. */
  perStepMs: number[];
  /** Median over all tasks of task.finishedAt − task.createdAt: dispatch, execution and report. */
  taskSpanMs: number;
  /** Median of next task's createdAt − previous task's finishedAt (0 when the completion creates the next task). */
  handoffMs: number;
  /** Median of first task's createdAt − run.createdAt. */
  firstTaskMs: number;
  /** Median of run.finishedAt − last task's finishedAt. */
  tailMs: number;
}

export function soloFigures(runs: TimedRun[]): SoloFigures {
  const t = (s: string | null) => (s ? Date.parse(s) : NaN);
  const spans: number[] = [];
  const handoffs: number[] = [];
  const firsts: number[] = [];
  const tails: number[] = [];
  for (const r of runs) {
    const tasks = [...r.tasks].sort((a, b) => Number(a.nodeId.slice(1)) - Number(b.nodeId.slice(1)));
    for (const k of tasks) spans.push(t(k.finishedAt) - t(k.createdAt));
    for (let i = 1; i < tasks.length; i++) handoffs.push(t(tasks[i].createdAt) - t(tasks[i - 1].finishedAt));
    if (tasks.length) {
      firsts.push(t(tasks[0].createdAt) - t(r.createdAt));
      tails.push(t(r.finishedAt) - t(tasks[tasks.length - 1].finishedAt));
    }
  }
  return {
    perStepMs: runs.map((r) => (t(r.finishedAt) - t(r.createdAt)) / CHAIN_LENGTH),
    taskSpanMs: median(spans),
    handoffMs: median(handoffs),
    firstTaskMs: median(firsts),
    tailMs: median(tails),
  };
}

export function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
