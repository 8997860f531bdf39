/**
 * `npm run bench:scale`: Weft scaled out on this machine. On one fresh database and one Redis
 * prefix it runs the bench chain (bench/weft.ts: 20 HTTP nodes against a local stub) under each
 * topology in turn — by default 1 api + 1 worker + 1 scheduler, then 2 api + 3 worker + 2
 * scheduler, all separate processes started at once — with runs spread over the APIs. For each it
 * prints steps/s, run latency and the CPU of every process over the same measured window, and
 * audits every run it started: succeeded, each task completed exactly once. It exits 1 when a
 * run is wrong, 0 otherwise (figures are reported, never judged). Everything it made — the
 * processes, the database, the Redis keys, the logs — is removed at the end, also on Ctrl-C
 * (a second Ctrl-C leaves everything as is). It talks to 127.0.0.1 only. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { dropInstallation, numberOption, onInterrupt, provisionTenant, weftEnv, withDb, type WeftProcess } from '../chaos/processes.js';
import { fmt, table } from './report.js';
import { parseTopology, runPhase, topologyName, type PhaseResult, type Topology } from './scale-phase.js';
import { PgCounters, redisPid } from './stats.js';
import { CHAIN_LENGTH, Stub } from './weft.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'dist/apps/cli/src/main.js');
const RUNTIME_ROLE = 'weft_app';

const HELP = `usage: npm run bench:scale -- [options]

  --topology A,W,S   APIs, workers and schedulers of one phase; repeat for more phases
                     (default: 1,1,1 then 2,3,2)
  --seconds S        measured window of each phase (default 20)
  --warmup-runs N    runs before each window (default 16)
  --in-flight N      runs in flight, each lane starting its next run as soon as its last ended (default 8)
  --pool N           PostgreSQL connections per process, WEFT_DB_POOL_SIZE (default 6: 7 processes
                     at the default 10 would come close to a stock server's 100 connections)
  --keep             keep the database, its Redis keys and the process logs
  --postgres URL     PostgreSQL superuser URL without a database (default postgres://postgres@127.0.0.1:5432)
  --redis URL        Redis URL (default redis://127.0.0.1:6379)
`;

interface Options {
  topologies: Topology[];
  seconds: number;
  warmupRuns: number;
  inFlight: number;
  pool: number;
  keep: boolean;
  postgres: string;
  redis: string;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      topology: { type: 'string', multiple: true },
      seconds: { type: 'string', default: '20' },
      'warmup-runs': { type: 'string', default: '16' },
      'in-flight': { type: 'string', default: '8' },
      pool: { type: 'string', default: '6' },
      keep: { type: 'boolean', default: false },
      postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
      redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  for (const url of [values.postgres!, values.redis!]) {
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname))
      throw new Error(`bench:scale runs against this machine only, not ${new URL(url).host}`);
  }
  return {
    topologies: (values.topology?.length ? values.topology : ['1,1,1', '2,3,2']).map(parseTopology),
    seconds: numberOption('seconds', values.seconds, 1),
    warmupRuns: Math.floor(numberOption('warmup-runs', values['warmup-runs'], 0)),
    inFlight: Math.floor(numberOption('in-flight', values['in-flight'], 1)),
    pool: Math.floor(numberOption('pool', values.pool, 1)),
    keep: values.keep!,
    postgres: values.postgres!.replace(/\/+$/, ''),
    redis: values.redis!,
  };
}

async function main(): Promise<number> {
  process.stdout.on('error', () => undefined);
  const o = options(process.argv.slice(2));
  const say = (l = '') => process.stdout.write(`${l}\n`);
  const started = new Date();
  const dbName = `weft_scale_${randomBytes(4).toString('hex')}`;
  const logDir = mkdtempSync(join(tmpdir(), `${dbName}-`));
  const ownerUrl = withDb(o.postgres, dbName);
  const prefix = `weft:${dbName}`;
  say(`bench:scale: database ${dbName} · Redis keys ${prefix}:* · logs ${logDir} · ${o.seconds} s per window`);

  const redis = new Redis(o.redis, { maxRetriesPerRequest: 3 });
  redis.on('error', () => undefined);
  const stub = new Stub();
  const procs: WeftProcess[] = [];
  let owner: pg.Client | undefined;
  const interrupted = onInterrupt('bench:scale', say);
  try {
    const env = weftEnv(withDb(o.postgres, dbName, RUNTIME_ROLE), ownerUrl, o.redis, {
      WEFT_LOG_LEVEL: process.env.WEFT_LOG_LEVEL ?? 'warn',
      WEFT_DB_POOL_SIZE: String(o.pool),
    });
    const { tenantId, apiKey } = await provisionTenant(cli, env, 'bench-scale');
    owner = new pg.Client({ connectionString: ownerUrl, application_name: 'weft-bench-scale' });
    await owner.connect();
    const counters = new PgCounters(owner, dbName, RUNTIME_ROLE, false);
    await counters.init();
    const ctx = {
      cli,
      env,
      logDir,
      owner,
      counters,
      redisUrl: o.redis,
      redisPid: await redisPid(redis),
      tenantId,
      apiKey,
      stub,
      stubUrl: await stub.start(),
      seconds: o.seconds,
      warmupRuns: o.warmupRuns,
      inFlight: o.inFlight,
      procs,
      interrupted,
      say,
    };
    const results: PhaseResult[] = [];
    for (const [i, t] of o.topologies.entries()) {
      results.push(await runPhase(ctx, `p${i + 1}`, t, i === 0));
    }
    const out = report(o, started, results);
    say('');
    for (const l of out) say(l);
    const dir = join(root, 'bench/results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'scale-latest.txt'), `${out.join('\n')}\n`);
    say('');
    say('bench:scale: report written to bench/results/scale-latest.txt');
    return results.some((r) => r.audit.problems.length) ? 1 : 0;
  } finally {
    await Promise.allSettled(procs.map((p) => p.stop()));
    await stub.close();
    await owner?.end().catch(() => undefined);
    if (o.keep) {
      say(`bench:scale: kept database ${dbName}, Redis keys ${prefix}:* and logs in ${logDir}`);
    } else {
      try {
        const deleted = await dropInstallation(o.postgres, dbName, redis, prefix, 'weft-bench-scale');
        rmSync(logDir, { recursive: true, force: true });
        say(`bench:scale: dropped database ${dbName}, ${deleted} Redis key${deleted === 1 ? '' : 's'} and the logs`);
      } catch (err) {
        say(`bench:scale: cleanup failed: ${(err as Error).message}`);
      }
    }
    redis.disconnect();
  }
}

/** The report: one block per phase, then the phases side by side. */
function report(o: Options, started: Date, results: PhaseResult[]): string[] {
  const L: string[] = [];
  const la = (x: number[]) => x.map((v) => v.toFixed(2)).join(' ');
  L.push(
    `== weft bench:scale · ${started.toISOString()} · ${cpus().length} CPUs · Node ${process.version} · ${o.inFlight} runs in flight of a ${CHAIN_LENGTH}-node HTTP chain · WEFT_DB_POOL_SIZE ${o.pool} ==`,
  );
  for (const [i, r] of results.entries()) {
    const total = r.cpu.reduce((s, c) => s + c.seconds, 0);
    const perStep = (s: number) => (r.window.steps ? (s / r.window.steps) * 1000 : NaN);
    L.push('');
    L.push(`phase ${i + 1}: ${topologyName(r.topology)} · load average ${la(r.load[0])} at start, ${la(r.load[1])} at the window's end`);
    L.push(
      `  ${fmt(r.window.steps / r.seconds, 1)} steps/s (${r.window.steps} steps in ${fmt(r.seconds, 1)} s) · ${r.window.runsEnded} runs ended in the window · ` +
        `run latency p50 ${fmt(r.window.latencyMs.p50, 0)} ms, p95 ${fmt(r.window.latencyMs.p95, 0)} ms, max ${fmt(r.window.latencyMs.max, 0)} ms`,
    );
    L.push(`  runs started per API: ${r.startsByApi.join(' / ')}`);
    const a = r.audit;
    L.push(
      `  audit of all ${a.runs} runs: ${a.succeeded} SUCCEEDED · ${a.tasks} tasks, ${a.completedFirstAttempt} completed at their first attempt, ${a.completedOnce} with exactly one applied NodeCompleted, ` +
        `${a.extraCompletions} completions beyond one · ${a.ignoredReports} reports ignored by fencing · HTTP calls ${r.stubHits} for ${r.expectedHits} tasks` +
        (r.fallbackPolls ? ` · ${r.fallbackPolls} run end(s) polled over the API` : ''),
    );
    L.push(`  correctness: ${a.problems.length ? `WRONG: ${a.problems.join('; ')}` : 'every run succeeded, each task completed once'}`);
    L.push(`  CPU over the window: ${fmt(perStep(total), 2)} ms / step in all, ${fmt((total / r.seconds) * 100, 0)}% of one core (of ${cpus().length * 100}%)`);
    for (const l of table(
      ['process', 'CPU s', '% of a core', 'ms / step'],
      r.cpu.map((c) => [c.name, fmt(c.seconds, 2), fmt((c.seconds / r.seconds) * 100, 0), fmt(perStep(c.seconds), 3)]),
    ))
      L.push(`    ${l}`);
  }
  if (results.length > 1) {
    const base = results[0]!;
    const group = (r: PhaseResult, role: string) => r.cpu.filter((c) => new RegExp(`^p\\d+-${role}-`).test(c.name)).reduce((s, c) => s + c.seconds, 0);
    const ms = (r: PhaseResult, s: number) => (r.window.steps ? (s / r.window.steps) * 1000 : NaN);
    const all = (r: PhaseResult) => r.cpu.reduce((s, c) => s + c.seconds, 0);
    const pgOf = (r: PhaseResult) => r.cpu.find((c) => c.name.startsWith('postgres'))?.seconds ?? 0;
    L.push('');
    L.push('side by side (CPU in ms per step, summed over each role)');
    for (const l of table(
      ['', 'steps/s', 'vs phase 1', 'p50 run ms', 'p95 run ms', 'CPU all', 'api', 'worker', 'scheduler', 'postgres', 'correct'],
      results.map((r) => [
        topologyName(r.topology),
        fmt(r.window.steps / r.seconds, 1),
        fmt(r.window.steps / r.seconds / (base.window.steps / base.seconds), 2),
        fmt(r.window.latencyMs.p50, 0),
        fmt(r.window.latencyMs.p95, 0),
        fmt(ms(r, all(r)), 2),
        fmt(ms(r, group(r, 'api')), 3),
        fmt(ms(r, group(r, 'worker')), 3),
        fmt(ms(r, group(r, 'scheduler')), 3),
        fmt(ms(r, pgOf(r)), 3),
        r.audit.problems.length ? 'NO' : 'yes',
      ]),
    ))
      L.push(`  ${l}`);
    L.push(
      `  This machine has ${cpus().length} cores for every process, PostgreSQL and Redis included, so more processes cannot be faster here: ` +
        'the comparison shows correctness with several of each and the overhead they add (idle polling, more connections, less batching).',
    );
  }
  return L;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench:scale: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
