/**
 * `npm run bench:search`: how fast the API's run search answers over a million runs. On a database
 * of its own (migrated as the tests' template is), it loads runs of several tenants with set-based
 * SQL (bench/search-load.ts), then times `RunRepository.listRuns` (the first page, default size)
 * and `countRuns` as the API calls them: as the runtime role `weft_app`, under row-level security,
 * one tenant transaction per call. Each filter is sampled with varied parameters over every
 * tenant; the report gives p50 and p99 against the targets, and with `--explain` the plan of each
 * filter's slowest call. It exits 0 whenever it ran; the database is dropped at the end, also on
 * failure or Ctrl-C. It talks to 127.0.0.1 only. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDataSource, RunRepository, runMigrations, RUNS_PAGE_DEFAULT, type RunFilter } from '@weft/persistence';
import { numberOption } from '../chaos/processes.js';
import { quantile } from './attack-mix.js';
import { assertLoopback, ROOT } from './installation.js';
import { fmt, table, verdict } from './report.js';
import { DAYS, ENVS, errorTerms, loadRuns, NODES, REGIONS, TEAMS } from './search-load.js';

/** The first page's p99 must be at most this, ms. */
const PAGE_P99_TARGET = 100;
/** countRuns' p99 must be at most this, ms. */
const COUNT_P99_TARGET = 500;
const STATUSES = ['SUCCEEDED', 'FAILED', 'RUNNING', 'CANCELLED', 'TIMED_OUT'];

const HELP = `usage: npm run bench:search -- [options]

  --runs N         runs to load (default 1000000)
  --tenants N      tenants they are spread over (default 10)
  --tasks-per-run N  COMPLETED tasks of every run, 0 to 5 (default 5)
  --samples N      calls of each kind per filter (default 60)
  --explain        print EXPLAIN (ANALYZE, BUFFERS) of each filter's slowest call, as weft_app
  --keep           keep the database (to look into a plan); drop it with DROP DATABASE … WITH (FORCE)
  --postgres URL   PostgreSQL superuser URL without a database (default postgres://postgres@127.0.0.1:5432)
`;

interface Options {
  runs: number;
  tenants: number;
  tasksPerRun: number;
  samples: number;
  explain: boolean;
  keep: boolean;
  postgres: string;
}

function options(): Options | undefined {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1000000' },
      tenants: { type: 'string', default: '10' },
      'tasks-per-run': { type: 'string', default: String(NODES.length) },
      samples: { type: 'string', default: '60' },
      explain: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  return {
    runs: numberOption('runs', values.runs, 1000),
    tenants: numberOption('tenants', values.tenants, 1),
    tasksPerRun: Math.min(NODES.length, numberOption('tasks-per-run', values['tasks-per-run'], 0)),
    samples: numberOption('samples', values.samples, 1),
    explain: values.explain,
    keep: values.keep,
    postgres: values.postgres.replace(/\/+$/, ''),
  };
}

function withDb(postgres: string, db: string, user?: string): string {
  const u = new URL(`${postgres}/${db}`);
  if (user) {
    u.username = user;
    u.password = '';
  }
  return u.toString();
}

/** One filter of the report: how to draw the i-th call's filter. */
interface Case {
  name: string;
  filter: (i: number, rnd: () => number) => RunFilter;
}

const pick = <T>(xs: readonly T[], rnd: () => number): T => xs[Math.floor(rnd() * xs.length)]!;

function cases(terms: string[]): Case[] {
  const labelSets = (rnd: () => number): Record<string, string> => {
    const r = rnd();
    if (r < 0.3) return { env: pick(ENVS, rnd) };
    if (r < 0.5) return { team: pick(TEAMS, rnd) };
    if (r < 0.65) return { region: pick(REGIONS, rnd), env: pick(ENVS, rnd) };
    if (r < 0.85) return { customer: `c${Math.floor(rnd() * 2000)}` };
    return { team: pick(TEAMS, rnd), customer: `c${Math.floor(rnd() * 2000)}` };
  };
  const day = 86_400_000;
  return [
    { name: 'labels + status', filter: (_, rnd) => ({ labels: labelSets(rnd), status: pick(STATUSES, rnd) }) },
    { name: 'failedNodeId', filter: (i, rnd) => ({ failedNodeId: i % 10 === 9 ? 'no-such-node' : pick(NODES, rnd) }) },
    { name: 'errorContains', filter: (i) => ({ errorContains: terms[i % terms.length]! }) },
    {
      name: 'finishedAfter/Before (1 day)',
      filter: (_, rnd) => {
        const start = Math.floor(Date.now() / day - rnd() * DAYS) * day;
        return { finishedAfter: new Date(start), finishedBefore: new Date(start + day) };
      },
    },
  ];
}

/** A deterministic generator of numbers in [0, 1) (mulberry32), so two runs draw the same filters. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Timed {
  ms: number;
  tenant: string;
  filter: RunFilter;
  rows: number;
  sql?: { text: string; params: unknown[] };
}

interface Result {
  name: string;
  page: Timed[];
  count: Timed[];
}

async function main(): Promise<void> {
  const o = options();
  if (!o) {
    process.stdout.write(HELP);
    return;
  }
  assertLoopback('bench:search', o.postgres);
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    process.stdout.write(`${line}\n`);
  };
  const dbName = `weft_search_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: withDb(o.postgres, 'postgres'), application_name: 'weft-bench-search' });
  await admin.connect();
  let owner: pg.Client | undefined;
  let ds: ReturnType<typeof createDataSource> | undefined;
  let dropped: Promise<void> | undefined;
  const drop = () =>
    (dropped ??= (async () => {
      if (ds?.isInitialized) await ds.destroy().catch(() => undefined);
      await owner?.end().catch(() => undefined);
      if (o.keep) say(`bench:search: kept database ${dbName}`);
      else await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      await admin.end().catch(() => undefined);
      if (!o.keep) say(`bench:search: dropped database ${dbName}`);
    })());
  const interrupted = () => {
    process.stdout.write(`bench:search: interrupted; dropping ${dbName}\n`);
    drop()
      .catch((err: Error) => process.stderr.write(`bench:search: cleanup failed: ${err.message}\n`))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    say(`bench:search ${new Date().toISOString()} · ${cpus().length} CPUs · load average ${loadavg()[0]!.toFixed(2)}`);
    say(`bench:search: database ${dbName}`);
    await admin.query(`CREATE DATABASE "${dbName}"`);
    const ownerUrl = withDb(o.postgres, dbName);
    await runMigrations(ownerUrl);
    owner = new pg.Client({ connectionString: ownerUrl, application_name: 'weft-bench-search-owner' });
    await owner.connect();
    say(`loading ${o.runs.toLocaleString('en-US')} runs over ${o.tenants} tenants, ${o.tasksPerRun} COMPLETED tasks a run`);
    const loaded = await loadRuns(owner, o.runs, o.tenants, o.tasksPerRun, say);
    say(
      `loaded in ${fmt(loaded.loadSeconds)} s (VACUUM ANALYZE ${fmt(loaded.analyzeSeconds)} s): ${loaded.labelRows.toLocaleString('en-US')} run_labels rows, ` +
        `${loaded.tasks.toLocaleString('en-US')} tasks; ${Object.entries(loaded.statuses)
          .map(([s, n]) => `${s} ${n.toLocaleString('en-US')}`)
          .join(', ')}`,
    );
    const terms = await errorTerms(owner);
    ds = createDataSource(withDb(o.postgres, dbName, 'weft_app'), { poolSize: 2, applicationName: 'weft-bench-search' });
    await ds.initialize();
    const captured = captureQueries(ds);
    const repo = new RunRepository(ds);
    const results: Result[] = [];
    for (const c of cases(terms)) {
      const rnd = random(results.length + 1);
      const page: Timed[] = [];
      const count: Timed[] = [];
      // Two calls of each kind first, not counted: the connections' first statements.
      for (let i = -2; i < o.samples; i++) {
        const tenant = loaded.tenants[(i + 2) % loaded.tenants.length]!;
        const filter = c.filter(i + 2, rnd);
        let t0 = performance.now();
        const p = await repo.listRuns(tenant, filter, RUNS_PAGE_DEFAULT);
        const pageMs = performance.now() - t0;
        const pageSql = captured.last;
        t0 = performance.now();
        const n = await repo.countRuns(tenant, filter);
        const countMs = performance.now() - t0;
        if (i < 0) continue;
        page.push({ ms: pageMs, tenant, filter, rows: p.edges.length, sql: pageSql });
        count.push({ ms: countMs, tenant, filter, rows: n, sql: captured.last });
      }
      results.push({ name: c.name, page, count });
      say(`  ${c.name}: ${o.samples} calls of each`);
    }
    report(results, say);
    if (o.explain) await explainSlowest(withDb(o.postgres, dbName, 'weft_app'), results, say);
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'search-latest.txt'), `${lines.join('\n')}\n`);
  } finally {
    await drop().catch((err: Error) => say(`bench:search: cleanup failed: ${err.message}`));
  }
}

/** The last SELECT each DataSource query sent (text and parameters), read from TypeORM's logger. */
function captureQueries(ds: ReturnType<typeof createDataSource>): { last?: { text: string; params: unknown[] } } {
  const state: { last?: { text: string; params: unknown[] } } = {};
  const noop = () => undefined;
  Object.assign(ds, {
    logger: {
      logQuery(text: string, params?: unknown[]) {
        if (/^\s*select\b/i.test(text) && !/set_config\('app\.tenant_id'/.test(text)) state.last = { text, params: params ?? [] };
      },
      logQueryError: noop,
      logQuerySlow: noop,
      logSchemaBuild: noop,
      logMigration: noop,
      log: noop,
    },
  });
  return state;
}

function describe(f: RunFilter): string {
  const day = (d?: Date) => d?.toISOString().slice(0, 10);
  return JSON.stringify({ ...f, finishedAfter: day(f.finishedAfter), finishedBefore: day(f.finishedBefore) });
}

function report(results: Result[], say: (line: string) => void): void {
  const rows: string[][] = [];
  for (const r of results) {
    for (const [kind, timed, target] of [
      ['first page', r.page, PAGE_P99_TARGET],
      ['countRuns', r.count, COUNT_P99_TARGET],
    ] as const) {
      const ms = timed.map((t) => t.ms);
      const p99 = quantile(ms, 0.99);
      const matches = timed.map((t) => t.rows);
      rows.push([
        `${r.name}, ${kind}`,
        String(ms.length),
        fmt(quantile(ms, 0.5)),
        fmt(p99),
        fmt(Math.max(...ms)),
        `≤ ${target}`,
        `${Math.min(...matches).toLocaleString('en-US')}–${Math.max(...matches).toLocaleString('en-US')}`,
        verdict(p99 <= target),
      ]);
    }
  }
  say('');
  for (const line of table(['filter, call', 'calls', 'p50 ms', 'p99 ms', 'max ms', 'p99 target', 'rows', 'verdict'], rows, true)) say(line);
  say('');
  say('rows: the page size, or the count, across the calls (a count of 0 is a filter nothing matches).');
  for (const r of results) {
    const slow = [...r.page].sort((a, b) => b.ms - a.ms)[0]!;
    const slowCount = [...r.count].sort((a, b) => b.ms - a.ms)[0]!;
    say(`slowest ${r.name}: page ${fmt(slow.ms)} ms ${describe(slow.filter)}; count ${fmt(slowCount.ms)} ms (${slowCount.rows}) ${describe(slowCount.filter)}`);
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of each filter's slowest page and count, as the API runs them: `weft_app`, the tenant set in the transaction. */
async function explainSlowest(runtimeUrl: string, results: Result[], say: (line: string) => void): Promise<void> {
  const c = new pg.Client({ connectionString: runtimeUrl, application_name: 'weft-bench-search-explain' });
  await c.connect();
  try {
    for (const r of results) {
      for (const [kind, timed] of [
        ['first page', r.page],
        ['countRuns', r.count],
      ] as const) {
        const slow = [...timed].sort((a, b) => b.ms - a.ms)[0]!;
        if (!slow.sql) continue;
        await c.query('BEGIN');
        try {
          await c.query(`SELECT set_config('app.tenant_id', $1, true)`, [slow.tenant]);
          const plan = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${slow.sql.text}`, slow.sql.params);
          say('');
          say(`EXPLAIN ${r.name}, ${kind} (${fmt(slow.ms)} ms in the bench): ${describe(slow.filter)}`);
          for (const row of plan.rows) say(`  ${row['QUERY PLAN']}`);
        } finally {
          await c.query('ROLLBACK');
        }
      }
    }
  } finally {
    await c.end();
  }
}

main().catch((err: Error) => {
  process.stderr.write(`bench:search: ${err.stack ?? err.message}\n`);
  process.exitCode = 1;
});
