/**
 * `npm run bench:peers`: Weft side by side with two durable-execution engines on this machine,
 * one engine at a time, on the same workload (bench/peer-workload.ts): Restate (server and
 * TypeScript SDK, inside a network namespace with only loopback), DBOS Transact (on the local
 * PostgreSQL), Weft as separate processes and Weft as `weft dev`. Prints steps/s with 8 workflows
 * in flight, ms per step alone, CPU per step by process and the correctness of every workflow,
 * then Weft's ratios to the best peer; last, `weft dev` again with every run watched by a
 * runUpdated subscriber (bench/peer-watch.ts), reported beside the unwatched row with the ratio
 * watched ÷ unwatched steps/s; writes the report to bench/results/peers-latest.txt. Exits
 * 0 when every engine ran correctly, 1 otherwise. The peers are installed apart, in bench/peers/;
 * this file imports none of their packages. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { numberOption, onInterrupt, withDb } from '../chaos/processes.js';
import { Child } from './peer-children.js';
import { preparePeers } from './peer-install.js';
import { report } from './peer-report.js';
import { failedResult, type EngineResult } from './peer-result.js';
import { runWeft } from './peer-weft.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const peersDist = join(root, 'bench/peers/dist/bench/peers');
const ENGINES = ['restate', 'dbos', 'weft', 'weft-dev', 'weft-dev-watched'] as const;
type Engine = (typeof ENGINES)[number];
const NAMES: Record<Engine, string> = {
  restate: 'Restate',
  dbos: 'DBOS',
  weft: 'Weft (processes)',
  'weft-dev': 'Weft (weft dev)',
  'weft-dev-watched': 'Weft (weft dev, watched)',
};

const HELP = `usage: npm run bench:peers -- [options]

  --seconds S        length of the window with 8 workflows in flight, per engine (default 15)
  --solo-runs N      workflows timed alone, per engine (default 7, at least 5; the median is reported)
  --only LIST        comma-separated engines among ${ENGINES.join(', ')} (default: all, in that order)
  --keep             keep the databases, the Redis keys, Restate's data folder and the logs
  --postgres URL     PostgreSQL superuser URL without a database (default postgres://postgres@127.0.0.1:5432)
  --redis URL        Redis URL (default redis://127.0.0.1:6379)
`;

interface Options {
  seconds: number;
  soloRuns: number;
  only: Engine[];
  keep: boolean;
  postgres: string;
  redis: string;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '15' },
      'solo-runs': { type: 'string', default: '7' },
      only: { type: 'string', default: ENGINES.join(',') },
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
  const only = values
    .only!.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only.filter((e) => !(ENGINES as readonly string[]).includes(e));
  if (unknown.length || !only.length) throw new Error(`--only takes engines among ${ENGINES.join(', ')}; got ${JSON.stringify(values.only)}`);
  return {
    seconds: numberOption('seconds', values.seconds, 1),
    soloRuns: Math.floor(numberOption('solo-runs', values['solo-runs'], 5)),
    only: ENGINES.filter((e) => only.includes(e)),
    keep: values.keep!,
    postgres: values.postgres!.replace(/\/+$/, ''),
    redis: values.redis!,
  };
}

/**
 * Runs a peer's driver (a process of its own group, so that a Ctrl-C reaches it once, from here)
 * and reads the result it wrote to `out`.
 * @throws Error with the end of its log when it fails
 */
async function runDriver(child: Child, out: string, interrupted: () => boolean): Promise<EngineResult> {
  child.start();
  let forwarded = false;
  const poll = setInterval(() => {
    if (interrupted() && !forwarded) {
      forwarded = true;
      child.signal('SIGTERM');
    }
  }, 100);
  try {
    const e = await child.exited;
    if (e.code !== 0) throw new Error(`${child.name} failed (exit code ${e.code}, signal ${e.signal}); see ${child.logFile}:\n${child.tail(25)}`);
    return JSON.parse(readFileSync(out, 'utf8')) as EngineResult;
  } finally {
    clearInterval(poll);
    await child.stop();
  }
}

/** Restate: its driver inside `unshare --net` with loopback up (see bench/peers/restate-driver.ts). */
async function runRestate(o: Options, work: string, say: (l: string) => void, interrupted: () => boolean): Promise<EngineResult> {
  if (process.getuid?.() !== 0) throw new Error('the Restate run needs root, for its network namespace (unshare --net)');
  const dir = join(work, 'restate');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'result.json');
  say(`bench: Restate, in a network namespace with only loopback (unshare --net; data in ${join(dir, 'restate-data')})…`);
  const child = new Child(
    'the Restate driver',
    'unshare',
    ['--net', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, join(peersDist, 'restate-driver.js'), ...driverArgs(o, dir, out)],
    join(dir, 'driver.log'),
    { detached: true, onLine: (l) => say(`  ${l}`) },
  );
  return runDriver(child, out, interrupted);
}

/** A peer driver's common arguments: its folder, its result file and the bench's lengths. */
function driverArgs(o: Options, dir: string, out: string): string[] {
  return ['--work', dir, '--out', out, '--seconds', String(o.seconds), '--solo-runs', String(o.soloRuns)];
}

/** DBOS: its driver (app and driver in one process) on a fresh database, dropped afterwards. */
async function runDbos(o: Options, work: string, say: (l: string) => void, interrupted: () => boolean): Promise<EngineResult> {
  const dbName = `dbos_bench_${randomBytes(4).toString('hex')}`;
  const dir = join(work, 'dbos');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'result.json');
  const admin = new pg.Client({ connectionString: withDb(o.postgres, 'postgres'), application_name: 'weft-peers-bench' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${dbName}"`);
    say(`bench: DBOS, system database ${dbName}…`);
    // Nothing of DBOS Cloud's or Conductor's environment reaches the app.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DBOS')));
    const child = new Child(
      'the DBOS driver',
      process.execPath,
      [join(peersDist, 'dbos-driver.js'), '--database-url', withDb(o.postgres, dbName), ...driverArgs(o, dir, out)],
      join(dir, 'driver.log'),
      { env, detached: true, onLine: (l) => say(`  ${l}`) },
    );
    return await runDriver(child, out, interrupted);
  } finally {
    if (o.keep) say(`bench: kept database ${dbName}`);
    else {
      await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).then(
        () => say(`bench: dropped database ${dbName}`),
        (err: Error) => say(`bench: !! dropping database ${dbName} failed: ${err.message}`),
      );
    }
    await admin.end().catch(() => undefined);
  }
}

async function main(): Promise<number> {
  process.stdout.on('error', () => undefined);
  const o = options(process.argv.slice(2));
  const say = (l = '') => process.stdout.write(`${l}\n`);
  const started = new Date();
  const load0 = loadavg();
  const work = mkdtempSync(join(tmpdir(), 'weft-peers-'));
  const interrupted = onInterrupt('bench:peers', say);
  say(`bench:peers: ${o.only.join(', ')} · ${o.seconds} s in flight, ${o.soloRuns} alone, per engine · logs in ${work}`);
  const results: EngineResult[] = [];
  try {
    if (o.only.includes('restate') || o.only.includes('dbos')) await preparePeers(root, say);
    for (const e of o.only) {
      if (interrupted()) break;
      const before = loadavg()[0];
      let r: EngineResult;
      try {
        if (e === 'restate') r = await runRestate(o, work, say, interrupted);
        else if (e === 'dbos') r = await runDbos(o, work, say, interrupted);
        else {
          say(`bench: ${NAMES[e]}…`);
          r = await runWeft({
            mode: e === 'weft' ? 'processes' : 'dev',
            watched: e === 'weft-dev-watched',
            root,
            seconds: o.seconds,
            soloRuns: o.soloRuns,
            postgres: o.postgres,
            redis: o.redis,
            keep: o.keep,
            work,
            say: (l) => say(`  ${l}`),
            interrupted,
          });
        }
      } catch (err) {
        if (interrupted()) break;
        say(`bench: !! ${NAMES[e]}: ${(err as Error).message}`);
        r = failedResult(NAMES[e], (err as Error).message.split('\n')[0]);
      }
      r.load = [before, loadavg()[0]];
      results.push(r);
    }
    if (interrupted()) {
      say('bench:peers: interrupted; no report');
      return 130;
    }
    const out = report({ started, seconds: o.seconds, soloRuns: o.soloRuns, load0, results });
    say('');
    for (const l of out) say(l);
    const dir = join(root, 'bench/results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'peers-latest.txt'), `${out.join('\n')}\n`);
    say('');
    say('bench:peers: report written to bench/results/peers-latest.txt');
    return results.every((r) => r.problems.length === 0) ? 0 : 1;
  } finally {
    if (o.keep) say(`bench:peers: kept the logs and Restate's data in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench:peers: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
