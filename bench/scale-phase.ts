/**
 * One topology of `npm run bench:scale`: its api, worker and scheduler processes started at once
 * on the bench's database and Redis prefix, runs of the bench chain started over every API in
 * turn, a measured window with the CPU of each process, then every run audited and the processes
 * stopped.
 */
import { loadavg } from 'node:os';
import type pg from 'pg';
import { WeftClient } from '../libs/client/src/index.js';
import { WeftProcess, freePort, type UnexpectedExit } from '../chaos/processes.js';
import { auditRuns, windowFigures, type RunAudit, type WindowFigures } from './scale-audit.js';
import { cpuSeconds, type PgCounters } from './stats.js';
import { CHAIN_LENGTH, RunWatcher, WORKFLOW_ID, chainDefinition, startRun, waitForApi, type Stub } from './weft.js';

/** How many processes of each role run at once. */
export interface Topology {
  apis: number;
  workers: number;
  schedulers: number;
}

/**
 * `"2,3,2"` as 2 APIs, 3 workers and 2 schedulers.
 * @throws Error naming the option when it is not three whole numbers of at least 1.
 */
export function parseTopology(text: string): Topology {
  const parts = text.split(',').map((p) => Number(p.trim()));
  if (parts.length !== 3 || parts.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`--topology must be APIS,WORKERS,SCHEDULERS (whole numbers >= 1), got ${JSON.stringify(text)}`);
  }
  return { apis: parts[0]!, workers: parts[1]!, schedulers: parts[2]! };
}

/** `2 api + 3 worker + 2 scheduler`. */
export function topologyName(t: Topology): string {
  return `${t.apis} api + ${t.workers} worker + ${t.schedulers} scheduler`;
}

/** What every phase shares: the installation, its tenant, the stub and the run settings. */
export interface PhaseContext {
  cli: string;
  env: NodeJS.ProcessEnv;
  logDir: string;
  owner: pg.Client;
  counters: PgCounters;
  redisUrl: string;
  redisPid?: number;
  tenantId: string;
  apiKey: string;
  stub: Stub;
  stubUrl: string;
  seconds: number;
  warmupRuns: number;
  inFlight: number;
  /** Every process any phase started, so the driver can stop them all whatever happens. */
  procs: WeftProcess[];
  interrupted: () => boolean;
  say: (line: string) => void;
}

/** CPU seconds of one process (or group) over the measured window. */
export interface ProcessCpu {
  name: string;
  seconds: number;
}

/** What one phase measured and found. */
export interface PhaseResult {
  topology: Topology;
  /** Length of the measured window, s (wall clock). */
  seconds: number;
  window: WindowFigures;
  cpu: ProcessCpu[];
  /** Runs started through each API, in order. */
  startsByApi: number[];
  audit: RunAudit;
  /** HTTP requests the stub served for this phase's runs, and how many one per task would be. */
  stubHits: number;
  expectedHits: number;
  /** Runs whose end the run-update channel did not announce (polled over the API instead). */
  fallbackPolls: number;
  /** Load averages (1, 5, 15 min) when the phase started and when its window ended. */
  load: [number[], number[]];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs topology `t` as phase `label` (it prefixes the process names and logs); publishes the
 * bench workflow first when `publish`. Resolves once every process of the phase stopped.
 * @throws Error when a process exits on its own, an API does not answer, or the run is interrupted.
 */
export async function runPhase(ctx: PhaseContext, label: string, t: Topology, publish: boolean): Promise<PhaseResult> {
  const load0 = loadavg();
  const unexpected: UnexpectedExit[] = [];
  const check = () => {
    if (ctx.interrupted()) throw new Error('interrupted');
    const u = unexpected[0];
    if (u) throw new Error(`${u.name} exited on its own (code ${u.code}, signal ${u.signal}); see ${ctx.logDir}/${u.name}.log`);
  };
  /** Sleeps `ms`, noticing an interrupt or a process exit within a quarter of a second. */
  const wait = async (ms: number) => {
    for (const end = performance.now() + ms; performance.now() < end;) {
      check();
      await sleep(Math.min(250, end - performance.now()));
    }
    check();
  };
  const t0 = performance.now();
  const mine: WeftProcess[] = [];
  const start = (name: string, args: string[]) => {
    const p = new WeftProcess(
      `${label}-${name}`,
      ctx.cli,
      args,
      ctx.env,
      ctx.logDir,
      () => Math.round(performance.now() - t0),
      (e) => {
        unexpected.push(e);
        ctx.say(`bench:scale: !! ${e.name} exited on its own (code ${e.code}, signal ${e.signal})`);
      },
    );
    mine.push(p);
    ctx.procs.push(p);
    p.start();
    return p;
  };
  let watcher: RunWatcher | undefined;
  try {
    const ports: number[] = [];
    for (let i = 1; i <= t.apis; i++) {
      const port = await freePort();
      ports.push(port);
      start(`api-${i}`, ['api', '--port', String(port), '--host', '127.0.0.1']);
    }
    for (let i = 1; i <= t.workers; i++) start(`worker-${i}`, ['worker']);
    for (let i = 1; i <= t.schedulers; i++) start(`scheduler-${i}`, ['scheduler']);
    const clients = ports.map((p) => new WeftClient(`http://127.0.0.1:${p}/graphql`, ctx.apiKey));
    for (const [i, c] of clients.entries()) await waitForApi(c, check, `${label}-api-${i + 1}`);
    if (publish) {
      await clients[0]!.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
        i: { workflowId: WORKFLOW_ID, definition: JSON.stringify(chainDefinition()) },
      });
    }
    watcher = new RunWatcher(ctx.redisUrl, ctx.tenantId, clients[0]!);
    await watcher.start();
    const w = watcher;

    const ids: string[] = [];
    const startsByApi = clients.map(() => 0);
    let seq = 0;
    const hits0 = ctx.stub.hits;
    // Run n goes to API n mod count: lanes and warm-up runs spread over every API.
    const oneRun = async (): Promise<void> => {
      const n = seq++;
      const api = n % clients.length;
      const id = await startRun(clients[api]!, ctx.stubUrl, n);
      startsByApi[api]!++;
      ids.push(id);
      await w.wait(id);
    };
    ctx.say(`bench:scale: ${label}: ${topologyName(t)} up; warming up with ${ctx.warmupRuns} runs…`);
    for (let done = 0; done < ctx.warmupRuns; done += ctx.inFlight) {
      await Promise.all(Array.from({ length: Math.min(ctx.inFlight, ctx.warmupRuns - done) }, oneRun));
      check();
    }
    // Statistics, as autovacuum would gather them soon after start (see bench/README.md).
    await ctx.owner.query('ANALYZE');

    ctx.say(`bench:scale: ${label}: ${ctx.inFlight} runs in flight for ${ctx.seconds} s…`);
    let stopping = false;
    const lanes = Array.from({ length: ctx.inFlight }, async () => {
      while (!stopping && !ctx.interrupted() && unexpected.length === 0) await oneRun();
    });
    // Awaited below; a lane failing while the phase is already giving up must not crash the driver before it cleans up.
    for (const lane of lanes) lane.catch(() => undefined);
    await wait(Math.max(2_000, ctx.seconds * 150));
    const a = await snapshot(ctx, mine);
    await wait(ctx.seconds * 1000);
    const b = await snapshot(ctx, mine);
    const load1 = loadavg();
    stopping = true;
    await Promise.all(lanes);
    check();

    const window = await windowFigures(ctx.owner, ctx.tenantId, a.dbNow, b.dbNow);
    const audit = await auditRuns(ctx.owner, ctx.tenantId, ids);
    const cpu = [...b.cpu].map(([name, s]) => ({ name, seconds: Math.max(0, s - (a.cpu.get(name) ?? 0)) }));
    let pg = 0;
    for (const [pid, s] of b.pgCpu) pg += Math.max(0, s - (a.pgCpu.get(pid) ?? 0)); // a backend new in the window spent all its CPU in it
    cpu.push({ name: 'postgres (this database + background)', seconds: pg });
    return {
      topology: t,
      seconds: (b.wall - a.wall) / 1000,
      window,
      cpu,
      startsByApi,
      audit,
      stubHits: ctx.stub.hits - hits0,
      expectedHits: audit.runs * CHAIN_LENGTH,
      fallbackPolls: w.fallbackPolls,
      load: [load0, load1],
    };
  } finally {
    watcher?.close();
    await Promise.allSettled(mine.map((p) => p.stop()));
  }
}

interface Snapshot {
  wall: number;
  dbNow: Date;
  /** CPU seconds so far by process name (Weft processes, Redis, the driver). */
  cpu: Map<string, number>;
  /** CPU seconds so far of each PostgreSQL process of the database, by pid. */
  pgCpu: Map<number, number>;
}

async function snapshot(ctx: PhaseContext, procs: WeftProcess[]): Promise<Snapshot> {
  const s: Snapshot = { wall: performance.now(), dbNow: await ctx.counters.now(), cpu: new Map(), pgCpu: new Map() };
  for (const p of procs) s.cpu.set(p.name, (p.pid && cpuSeconds(p.pid)) || 0);
  if (ctx.redisPid) s.cpu.set('redis-server', cpuSeconds(ctx.redisPid) ?? 0);
  s.cpu.set('bench driver + stub', cpuSeconds(process.pid) ?? 0);
  for (const pid of await ctx.counters.backendPids()) s.pgCpu.set(pid, cpuSeconds(pid) ?? 0);
  return s;
}
