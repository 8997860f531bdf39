/**
 * `npm run bench:fairness`: does fair dispatch keep a quiet tenant's steps quick while another
 * floods the shared `http` queue, and does a node rate limit hold? On a fresh installation
 * (bench/installation.ts: `weft api`, `weft worker`, `weft scheduler` as separate processes) it
 * measures, in one run: tenant B alone (a two-step run every 200 ms), tenant A alone (a flood of
 * two-step runs), both at once, and a `for_each` of 200 HTTP calls under `rate_limit` 20 per
 * second, whose arrivals the stub records. It prints a table and a PASS / NOT MET line per
 * criterion. It exits 0 whenever it ran; everything it made is removed at the end. It talks to
 * 127.0.0.1 only. See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { WeftClient } from '@weft/client';
import { numberOption, onInterrupt } from '../chaos/processes.js';
import { quantile } from './attack-mix.js';
import {
  achievedRate,
  admittingPasses,
  every,
  flood,
  maxInWindow,
  PAIR_STEPS,
  PAIR_WORKFLOW,
  pairDefinition,
  PARTNER_LIMIT,
  PARTNER_WORKFLOW,
  partnerDefinition,
  publish,
  rateLags,
  rateStarts,
  runTimes,
  sampleQueue,
  sleep,
  startRun,
  stepPath,
  type Driver,
  type Flood,
  type QueueSample,
  type RunTimes,
  type StepPath,
  type Ticks,
} from './fairness-load.js';
import { assertLoopback, ROOT, startInstallation, type Installation, type InstalledTenant } from './installation.js';
import { fmt, table } from './report.js';
import { FloorProbe } from './step-floor.js';
import { RunWatcher, Stub } from './weft.js';

/** B's median ms/step under the flood may be at most this many times its idle median. */
const MEDIAN_RATIO_TARGET = 2;
/** B's p99 ms/step under the flood may be at most this many times its idle p99. */
const P99_RATIO_TARGET = 5;
/** A's steps/s under the flood must reach this fraction of its steps/s alone. */
const THROUGHPUT_TARGET = 0.8;
/** The rate-limited run's achieved starts/s must reach at least this. */
const RATE_TARGET = 19;
/** Elements of the rate-limited run's `for_each`. */
const PARTNER_TASKS = 200;
/** B starts a run this often, ms. */
const B_INTERVAL_MS = 200;

const HELP = `usage: npm run bench:fairness -- [options]

  --seconds S        how long tenant B runs alone (default 20)
  --runs N           runs of tenant A's flood, alone and beside B (default 5000)
  --in-flight N      A's start requests outstanding at once (default 20)
  --concurrency N    the worker's WEFT_WORKER_CONCURRENCY (default 8, Weft's own default)
  --keep             keep the database, its Redis keys and the process logs
  --postgres URL     PostgreSQL superuser URL without a database (default postgres://postgres@127.0.0.1:5432)
  --redis URL        Redis URL (default redis://127.0.0.1:6379)
`;

interface Options {
  seconds: number;
  runs: number;
  inFlight: number;
  concurrency: number;
}

/** B's runs of one phase. */
interface BPhase {
  ticks: Ticks;
  times: RunTimes;
  path: StepPath;
}

/** A's flood of one phase, and the queue's readings during it. */
interface APhase {
  flood: Flood;
  times: RunTimes;
  path: StepPath;
  queue: QueueSample[];
  passes: { rows: number[]; gapsMs: number[] };
}

interface RateLimitPhase {
  status: string;
  stubMs: number[];
  dbMs: number[];
  /** Per call: its arrival at the stub − its start in flow_rate_starts, ms. */
  lagMs: number[];
}

/** How often the queue is read during A's floods, ms. */
const SAMPLE_MS = 1000;

async function main(): Promise<number> {
  process.stdout.on('error', () => undefined);
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      seconds: { type: 'string', default: '20' },
      runs: { type: 'string', default: '5000' },
      'in-flight': { type: 'string', default: '20' },
      concurrency: { type: 'string', default: '8' },
      keep: { type: 'boolean', default: false },
      postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
      redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  assertLoopback('bench:fairness', values.postgres!, values.redis!);
  const o: Options = {
    seconds: numberOption('seconds', values.seconds, 1),
    runs: Math.round(numberOption('runs', values.runs, 1)),
    inFlight: Math.round(numberOption('in-flight', values['in-flight'], 1)),
    concurrency: Math.round(numberOption('concurrency', values.concurrency, 1)),
  };
  const say = (l = '') => process.stdout.write(`${l}\n`);
  const interrupted = onInterrupt('bench:fairness', say);
  const check = (inst: Installation) => {
    if (interrupted()) throw new Error('interrupted');
    if (inst.exits.length) throw new Error(`a Weft process exited on its own: ${inst.exits.join(', ')}; see ${inst.logDir}`);
  };
  const uptime = [uptimeLine()];
  // Arrivals by element, ms since the epoch (this machine's clock, as the database's is).
  const partnerArrivals = new Map<number, number>();
  const stub = new Stub((url, at) => {
    if (url.startsWith('/partner')) partnerArrivals.set(Number(new URL(url, 'http://stub').searchParams.get('i')), performance.timeOrigin + at);
  });
  const stubUrl = await stub.start();
  let inst: Installation | undefined;
  let owner: pg.Client | undefined;
  const watchers: RunWatcher[] = [];
  const closers: (() => Promise<void>)[] = [];
  try {
    inst = await startInstallation({
      tool: 'bench:fairness',
      dbPrefix: 'weft_fair',
      postgres: values.postgres!,
      redis: values.redis!,
      tenants: ['tenant-a', 'tenant-b'],
      roleEnv: { worker: { WEFT_WORKER_CONCURRENCY: String(o.concurrency) } },
      keep: values.keep!,
      say,
    });
    const installation = inst;
    owner = new pg.Client({ connectionString: inst.ownerUrl, application_name: 'bench:fairness' });
    await owner.connect();
    const [ta, tb] = inst.tenants as [InstalledTenant, InstalledTenant];
    const driver = async (t: InstalledTenant, name: string): Promise<Driver> => {
      const client = new WeftClient(installation.url, t.apiKey);
      const watcher = new RunWatcher(values.redis!, t.tenantId, client);
      watchers.push(watcher);
      await watcher.start();
      await publish(client, PAIR_WORKFLOW, pairDefinition());
      return { client, watcher, config: { stub: stubUrl, tenant: name } };
    };
    const a = await driver(ta, 'a');
    const b = await driver(tb, 'b');
    await publish(b.client, PARTNER_WORKFLOW, partnerDefinition());

    say('bench:fairness: warm-up (A: 100 runs, B: a run every 200 ms for 3 s)');
    await flood(a, 100, o.inFlight);
    const warmUntil = performance.now() + 3_000;
    await every(b, B_INTERVAL_MS, () => performance.now() >= warmUntil);
    check(inst);

    const bPhase = async (ticks: Ticks): Promise<BPhase> => ({
      ticks,
      times: await runTimes(owner!, tb.tenantId, ticks.ids, PAIR_STEPS),
      path: await stepPath(owner!, tb.tenantId, ticks.ids),
    });
    const aPhase = async (f: Flood, queue: QueueSample[]): Promise<APhase> => {
      const times = await runTimes(owner!, ta.tenantId, f.ids, PAIR_STEPS);
      const passes = await admittingPasses(owner!, 'http', times.firstCreatedMs, times.lastFinishedMs);
      return { flood: f, times, path: await stepPath(owner!, ta.tenantId, f.ids), queue, passes };
    };
    const sampler = new pg.Client({ connectionString: inst.ownerUrl, application_name: 'bench:fairness' });
    await sampler.connect();
    closers.push(() => sampler.end());
    const floor = await FloorProbe.start(inst.ownerUrl, stubUrl, B_INTERVAL_MS);
    closers.push(async () => floor.close());
    // The probe starts its runs half an interval after B's, so the two never start together.
    const probeBeside = async <T>(work: Promise<T>): Promise<[T, number[]]> => {
      await sleep(B_INTERVAL_MS / 2);
      floor.run();
      const done = await work;
      return [done, await floor.stop()];
    };

    await analyze(owner);
    say(`bench:fairness: 1. B alone, a run every ${B_INTERVAL_MS} ms for ${o.seconds} s`);
    const idleUntil = performance.now() + o.seconds * 1000;
    const [bIdleTicks, floorIdle] = await probeBeside(every(b, B_INTERVAL_MS, () => performance.now() >= idleUntil));
    const bIdle = await bPhase(bIdleTicks);
    check(inst);

    await analyze(owner);
    say(`bench:fairness: 2. A alone, ${o.runs} runs, ${o.inFlight} starts in flight`);
    let stopSampling = sampleQueue(sampler, 'http', SAMPLE_MS);
    const aloneFlood = await flood(a, o.runs, o.inFlight);
    const aAlone = await aPhase(aloneFlood, await stopSampling());
    check(inst);

    await analyze(owner);
    say(`bench:fairness: 3. A's flood of ${o.runs} runs, B a run every ${B_INTERVAL_MS} ms beside it`);
    let flooding = true;
    stopSampling = sampleQueue(sampler, 'http', SAMPLE_MS);
    const aFlood = flood(a, o.runs, o.inFlight).finally(() => (flooding = false));
    const bTicks = probeBeside(every(b, B_INTERVAL_MS, () => !flooding));
    const underFlood = await aFlood;
    const aUnder = await aPhase(underFlood, await stopSampling());
    const [bUnderTicks, floorUnder] = await bTicks;
    const bUnder = await bPhase(bUnderTicks);
    check(inst);

    say(`bench:fairness: 4. B's run of ${PARTNER_TASKS} calls under rate_limit ${PARTNER_LIMIT}/s`);
    partnerArrivals.clear();
    const runId = await startRun(b.client, PARTNER_WORKFLOW, { items: Array.from({ length: PARTNER_TASKS }, (_, i) => i) }, { stub: stubUrl });
    const status = await b.watcher.wait(runId);
    const rate: RateLimitPhase = {
      status,
      stubMs: [...partnerArrivals.values()],
      dbMs: await rateStarts(owner, tb.tenantId),
      lagMs: await rateLags(owner, tb.tenantId, partnerArrivals),
    };
    check(inst);
    uptime.push(uptimeLine());

    const lines = report(o, uptime, { bIdle, aAlone, aUnder, bUnder, rate, floor: { idle: floorIdle, under: floorUnder } }, inst);
    say('');
    for (const l of lines) say(l);
    const results = join(ROOT, 'bench/results');
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'fairness-latest.txt'), `${lines.join('\n')}\n`);
    say('bench:fairness: report written to bench/results/fairness-latest.txt');
    return 0;
  } finally {
    for (const w of watchers) w.close();
    for (const c of closers) await c().catch(() => undefined);
    await owner?.end().catch(() => undefined);
    await inst?.close();
    await stub.close();
  }
}

/** `ANALYZE` as the owner, before each phase: as autovacuum would on tables that just grew. */
async function analyze(owner: pg.Client): Promise<void> {
  await owner.query('ANALYZE');
}

function uptimeLine(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}`;
  }
}

function commitOf(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${sha} (modified)` : sha;
  } catch {
    return 'unknown';
  }
}

function report(
  o: Options,
  uptime: string[],
  r: { bIdle: BPhase; aAlone: APhase; aUnder: APhase; bUnder: BPhase; rate: RateLimitPhase; floor: { idle: number[]; under: number[] } },
  inst: Installation,
): string[] {
  const L: string[] = [];
  const q = (xs: number[], p: number) => quantile(xs.filter(Number.isFinite), p);
  const f1 = (x: number) => fmt(x, 1);
  L.push(`== weft bench:fairness · ${new Date().toISOString()} · commit ${commitOf()} · ${cpus().length} CPUs · Node ${process.version} ==`);
  L.push(`uptime at start: ${uptime[0]}`);
  L.push(`uptime at end:   ${uptime[1]}`);
  L.push(
    `one api, one worker (WEFT_WORKER_CONCURRENCY ${o.concurrency}), one scheduler; two-step runs (HTTP → HTTP on queue http, a stub on 127.0.0.1 answering at once); ` +
      `A: ${o.runs} runs, ${o.inFlight} starts in flight; B: a run every ${B_INTERVAL_MS} ms`,
  );
  L.push('');

  L.push("tenant B's runs, ms per step = (run finished_at − created_at) / 2:");
  const bRow = (name: string, p: BPhase) => [
    name,
    String(p.ticks.ids.length),
    String(p.times.succeeded),
    f1(q(p.times.perStepMs, 0.5)),
    f1(q(p.times.perStepMs, 0.9)),
    f1(q(p.times.perStepMs, 0.99)),
    f1(q(p.times.perStepMs, 1)),
    f1(p.ticks.lateMs),
  ];
  for (const l of table(
    ['', 'runs', 'succeeded', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'start late ms'],
    [bRow('idle', r.bIdle), bRow('under the flood', r.bUnder)],
  ))
    L.push(`  ${l}`);
  L.push('');

  L.push(
    `the floor probe, ms per step: the least a durable two-step run does (a commit that creates it; per step a stub call and a commit), in a process of its own, no engine, no queue, a run every ${B_INTERVAL_MS} ms beside B:`,
  );
  const fRow = (name: string, xs: number[]) => [name, String(xs.length), f1(q(xs, 0.5)), f1(q(xs, 0.9)), f1(q(xs, 0.99)), f1(q(xs, 1))];
  for (const l of table(['', 'runs', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'], [fRow('idle', r.floor.idle), fRow('under the flood', r.floor.under)]))
    L.push(`  ${l}`);
  L.push('');

  L.push("tenant A's throughput, steps / (last run finished_at − first run created_at):");
  const aRow = (name: string, p: APhase) => {
    const spanS = (p.times.lastFinishedMs - p.times.firstCreatedMs) / 1000;
    const startS = (p.flood.lastAcceptedAt - p.flood.firstSentAt) / 1000;
    return [
      name,
      String(p.flood.ids.length),
      String(p.times.succeeded),
      String(p.times.succeeded * PAIR_STEPS),
      fmt(spanS, 2),
      f1((p.times.succeeded * PAIR_STEPS) / spanS),
      f1(p.flood.ids.length / startS),
      f1(q(p.times.perStepMs, 0.5)),
    ];
  };
  for (const l of table(
    ['', 'runs', 'succeeded', 'steps', 'span s', 'steps/s', 'API starts/s', 'p50 ms/step'],
    [aRow('alone', r.aAlone), aRow('under the flood (beside B)', r.aUnder)],
  ))
    L.push(`  ${l}`);
  L.push('');

  L.push("where a step's time went (tasks' own timestamps): eager = taken by the worker that reported the previous step; the others waited in the backlog");
  const pRow = (name: string, p: StepPath) => [
    name,
    String(p.tasks),
    `${fmt((100 * p.eager) / Math.max(1, p.tasks), 0)} %`,
    f1(q(p.admitMs, 0.5)),
    f1(q(p.admitMs, 0.99)),
    f1(q(p.admittedToEndMs, 0.5)),
    f1(q(p.admittedToEndMs, 0.99)),
    f1(q(p.eagerSpanMs, 0.5)),
    f1(q(p.firstTaskMs, 0.5)),
    f1(q(p.tailMs, 0.5)),
  ];
  for (const l of table(
    ['', 'tasks', 'eager', 'ready→admitted p50', 'p99', 'admitted→done p50', 'p99', 'eager task p50', 'run→1st task p50', 'last task→run end p50'],
    [pRow('B idle', r.bIdle.path), pRow('B under the flood', r.bUnder.path), pRow('A alone', r.aAlone.path), pRow('A under the flood', r.aUnder.path)],
  ))
    L.push(`  ${l}`);
  L.push('');

  L.push(
    `queue http, read every ${SAMPLE_MS / 1000} s during A's floods: backlog = ready rows not admitted; in Bull = admitted, not yet claimed (PENDING); running = claimed (RUNNING); admitting passes = weft_dispatch calls that admitted rows (one enqueued_at each)`,
  );
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);
  const qRow = (name: string, p: APhase) => [
    name,
    String(p.queue.length),
    f1(mean(p.queue.map((x) => x.backlog))),
    String(Math.max(0, ...p.queue.map((x) => x.backlog))),
    f1(mean(p.queue.map((x) => x.pending))),
    String(Math.max(0, ...p.queue.map((x) => x.pending))),
    f1(mean(p.queue.map((x) => x.running))),
    String(Math.max(0, ...p.queue.map((x) => x.running))),
    String(p.passes.rows.length),
    f1(q(p.passes.rows, 0.5)),
    f1(q(p.passes.gapsMs, 0.5)),
    f1(q(p.passes.gapsMs, 0.99)),
  ];
  for (const l of table(
    ['', 'readings', 'backlog mean', 'max', 'in Bull mean', 'max', 'running mean', 'max', 'admitting passes', 'rows/pass p50', 'gap p50 ms', 'gap p99 ms'],
    [qRow('A alone', r.aAlone), qRow('A beside B', r.aUnder)],
  ))
    L.push(`  ${l}`);
  L.push('');

  const stubMost = maxInWindow(r.rate.stubMs, 1000);
  const dbMost = maxInWindow(r.rate.dbMs, 1000);
  const stubRate = achievedRate(r.rate.stubMs);
  const dbRate = achievedRate(r.rate.dbMs);
  L.push(
    `rate limit: one run, for_each of ${PARTNER_TASKS} HTTP calls, rate_limit {key: "partner", limit: ${PARTNER_LIMIT}, per_seconds: 1}; run ${r.rate.status}`,
  );
  const span = (xs: number[]) => (xs.length > 1 ? fmt((Math.max(...xs) - Math.min(...xs)) / 1000, 2) : 'n/a');
  for (const l of table(
    ['clock', 'starts', 'most in any 1 s', 'first→last s', 'starts/s'],
    [
      ["stub's arrivals", String(r.rate.stubMs.length), String(stubMost), span(r.rate.stubMs), fmt(stubRate, 2)],
      ['database (flow_rate_starts)', String(r.rate.dbMs.length), String(dbMost), span(r.rate.dbMs), fmt(dbRate, 2)],
    ],
  ))
    L.push(`  ${l}`);
  L.push(
    `  a call's arrival at the stub − its start in flow_rate_starts: p50 ${f1(q(r.rate.lagMs, 0.5))} ms, p99 ${f1(q(r.rate.lagMs, 0.99))} ms, min ${f1(q(r.rate.lagMs, 0))} ms, max ${f1(q(r.rate.lagMs, 1))} ms`,
  );
  L.push('');

  const problems = [
    ...inst.exits.map((e) => `process exited on its own: ${e}`),
    ...[r.bIdle, r.bUnder].flatMap((p) => p.ticks.failedStarts.slice(0, 3).map((m) => `B start failed: ${m}`)),
    ...[r.aAlone, r.aUnder].flatMap((p) => p.flood.failedStarts.slice(0, 3).map((m) => `A start failed: ${m}`)),
    ...[r.bIdle.ticks.statuses, r.bUnder.ticks.statuses, r.aAlone.flood.statuses, r.aUnder.flood.statuses].flatMap((s) =>
      Object.entries(s)
        .filter(([k]) => k !== 'SUCCEEDED')
        .map(([k, n]) => `${n} run(s) ${k}`),
    ),
    ...(r.rate.status === 'SUCCEEDED' ? [] : [`the rate-limited run ended ${r.rate.status}`]),
    ...(r.rate.stubMs.length === PARTNER_TASKS ? [] : [`the stub saw ${r.rate.stubMs.length} partner calls, not ${PARTNER_TASKS}`]),
  ];
  for (const p of problems) L.push(`!! ${p}`);

  const idleP50 = q(r.bIdle.times.perStepMs, 0.5);
  const idleP99 = q(r.bIdle.times.perStepMs, 0.99);
  const underP50 = q(r.bUnder.times.perStepMs, 0.5);
  const underP99 = q(r.bUnder.times.perStepMs, 0.99);
  const tput = (p: APhase) => (p.times.succeeded * PAIR_STEPS) / ((p.times.lastFinishedMs - p.times.firstCreatedMs) / 1000);
  const tputRatio = tput(r.aUnder) / tput(r.aAlone);
  const line = (met: boolean, text: string) => L.push(`${met ? 'PASS   ' : 'NOT MET'} ${text}`);
  line(
    underP50 / idleP50 <= MEDIAN_RATIO_TARGET,
    `B median ms/step under the flood / idle: ${fmt(underP50, 1)} / ${fmt(idleP50, 1)} = ${fmt(underP50 / idleP50, 2)} × (target ≤ ${MEDIAN_RATIO_TARGET} ×)`,
  );
  line(
    underP99 / idleP99 <= P99_RATIO_TARGET,
    `B p99 ms/step under the flood / idle: ${fmt(underP99, 1)} / ${fmt(idleP99, 1)} = ${fmt(underP99 / idleP99, 2)} × (target ≤ ${P99_RATIO_TARGET} ×)`,
  );
  line(stubMost <= PARTNER_LIMIT, `rate limit, most calls in any 1 s at the stub: ${stubMost} (target ≤ ${PARTNER_LIMIT}; database clock: ${dbMost})`);
  line(
    stubRate >= RATE_TARGET,
    `rate limit, achieved rate at the stub: ${fmt(stubRate, 2)} starts/s = ${fmt(stubRate / PARTNER_LIMIT, 2)} of the limit (target ≥ ${RATE_TARGET}/s; database clock: ${fmt(dbRate, 2)}/s)`,
  );
  line(
    tputRatio >= THROUGHPUT_TARGET,
    `A steps/s under the flood / alone: ${fmt(tput(r.aUnder), 1)} / ${fmt(tput(r.aAlone), 1)} = ${fmt(tputRatio, 2)} (target ≥ ${THROUGHPUT_TARGET})`,
  );
  const floorRatio = q(r.floor.under, 0.5) / q(r.floor.idle, 0.5);
  L.push(
    `info    the floor probe's median under the flood / idle: ${fmt(q(r.floor.under, 0.5), 1)} / ${fmt(q(r.floor.idle, 0.5), 1)} = ${fmt(floorRatio, 2)} × (what contention alone does to the least work of a step; B's ratio is ${fmt(underP50 / idleP50 / floorRatio, 2)} × it)`,
  );
  if (problems.length) L.push('NOT MET every run succeeded, no process exited (see the lines marked !!)');
  return L;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:fairness: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
