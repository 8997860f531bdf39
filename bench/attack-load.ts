/**
 * `npm run bench:attack`: one tenant attacking a shared Weft while another goes about its
 * business. On a fresh database and Redis prefix it starts `weft api`, `weft worker` and
 * `weft scheduler` as separate processes, two tenants A and B, and A's set-up (a run whose tasks
 * hold large outputs, a schedule, viewer keys). It measures B's request latency (`whoami` and a
 * small `runs` page, one after another) with the platform idle, then again while A runs the four
 * attacks of bench/attack-mix.ts at once (in a process of its own, bench/attack-runner.ts), and prints both, their ratio and what each attack got.
 * Pass: B's p99 under attack within 10 × its idle p99, and none of B's requests failed. It exits 0
 * whenever it ran (a miss prints NOT MET); everything it made is removed at the end. It talks to
 * 127.0.0.1 only. See bench/README.md.
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { WeftClient } from '@weft/client';
import { numberOption, onInterrupt } from '../chaos/processes.js';
import {
  ATTACK_NAMES,
  closeAttack,
  neighbourConnects,
  neighbourLatencies,
  prepareAttack,
  quantile,
  REPORTED_ATTACK,
  type AttackOutcome,
} from './attack-mix.js';
import { assertLoopback, ROOT, startInstallation, type Installation, type InstalledTenant } from './installation.js';
import { fmt, table, verdict } from './report.js';
/** B's p99 under attack may be at most this many times its idle p99. */
const P99_RATIO_TARGET = 10;

const HELP = `usage: npm run bench:attack -- [options]

  --seconds S        how long B is measured idle, and how long the attacks run (default 30)
  --attacks A,B      only these of responses, definitions, connections, backfills (default: all)
  --keep             keep the database, its Redis keys and the process logs
  --postgres URL     PostgreSQL superuser URL without a database (default postgres://postgres@127.0.0.1:5432)
  --redis URL        Redis URL (default redis://127.0.0.1:6379)
`;

async function main(): Promise<number> {
  process.stdout.on('error', () => undefined);
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      seconds: { type: 'string', default: '30' },
      attacks: { type: 'string', default: ATTACK_NAMES.join(',') },
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
  assertLoopback('bench:attack', values.postgres!, values.redis!);
  const seconds = numberOption('seconds', values.seconds, 1);
  const only = values.attacks!.split(',').map((a) => a.trim()) as AttackOutcome['name'][];
  for (const a of only) if (!ATTACK_NAMES.includes(a)) throw new Error(`--attacks takes ${ATTACK_NAMES.join(', ')}; got ${JSON.stringify(a)}`);
  const say = (l = '') => process.stdout.write(`${l}\n`);
  say(`bench:attack: ${seconds} s idle, ${seconds} s under attack`);
  onInterrupt('bench:attack', say);
  let inst: Installation | undefined;
  let prepared: Awaited<ReturnType<typeof prepareAttack>> | undefined;
  try {
    inst = await startInstallation({
      tool: 'bench:attack',
      dbPrefix: 'weft_attack',
      postgres: values.postgres!,
      redis: values.redis!,
      tenants: ['attacker', 'neighbour'],
      keep: values.keep!,
      say,
    });
    const [a, b] = inst.tenants as [InstalledTenant, InstalledTenant];
    const { url, exits } = inst;
    const admin = new WeftClient(url, a.apiKey);
    say('bench:attack: preparing tenant A (a run of 40 tasks of 900 kB each, a schedule, 10 viewer keys)');
    prepared = await prepareAttack(url, admin, REPORTED_ATTACK);

    say(`bench:attack: B idle for ${seconds} s`);
    const idle = await neighbourLatencies(url, b.apiKey, seconds);
    say(`bench:attack: B beside A's attacks for ${seconds} s`);
    const load = [loadavg()[0]!];
    const connectAfter = new Promise<string>((resolve) => setTimeout(() => resolve(neighbourConnects(url, b.apiKey)), (seconds * 1000) / 2));
    const { stub: _stub, ...plan } = prepared;
    const runner = promisify(execFile)(
      process.execPath,
      [join(ROOT, 'dist/bench/attack-runner.js'), JSON.stringify({ plan, sizes: REPORTED_ATTACK, seconds, only })],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    ).then((r) => JSON.parse(r.stdout.trim().split('\n').pop()!) as AttackOutcome[]);
    const [attacks, busy, bConnect] = await Promise.all([runner, neighbourLatencies(url, b.apiKey, seconds), connectAfter]);
    load.push(loadavg()[0]!);

    const p = (xs: number[], q: number) => fmt(quantile(xs, q), 1);
    const ratio = quantile(busy.ms, 0.99) / quantile(idle.ms, 0.99);
    const met = ratio <= P99_RATIO_TARGET && busy.failures.length === 0 && idle.failures.length === 0 && bConnect === 'ack' && exits.length === 0;
    const L: string[] = [];
    L.push(
      `== weft bench:attack · ${new Date().toISOString()} · ${cpus().length} CPUs · Node ${process.version} · load average ${load.map((x) => x.toFixed(2)).join(' → ')} ==`,
    );
    L.push('');
    L.push("tenant B's requests (whoami and runs(first: 5), one after another):");
    for (const l of table(
      ['', 'requests', 'failed', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      [
        ['idle', String(idle.ms.length), String(idle.failures.length), p(idle.ms, 0.5), p(idle.ms, 0.9), p(idle.ms, 0.99), p(idle.ms, 1)],
        ['under attack', String(busy.ms.length), String(busy.failures.length), p(busy.ms, 0.5), p(busy.ms, 0.9), p(busy.ms, 0.99), p(busy.ms, 1)],
      ],
    ))
      L.push(`  ${l}`);
    for (const f of [...idle.failures, ...busy.failures].slice(0, 5)) L.push(`  failed: ${f}`);
    L.push(`  a graphql-ws connection of B's, half way through the attacks: ${bConnect}`);
    L.push('');
    L.push("tenant A's attacks:");
    for (const l of table(
      ['attack', 'attempts', 'answers', 'largest answer'],
      attacks.map((o) => [o.name, String(o.attempts), answers(o), o.largestAnswerBytes ? `${fmt(o.largestAnswerBytes / 1e6, 1)} MB` : '-']),
      true,
    ))
      L.push(`  ${l}`);
    for (const o of attacks) for (const [k, m] of Object.entries(o.samples)) L.push(`  ${o.name} ${k}: ${m}`);
    if (prepared.keysRefused) L.push(`  keys: minting stopped after ${prepared.keys.length}: ${prepared.keysRefused}`);
    if (exits.length) L.push(`  processes that exited on their own: ${exits.join(', ')}`);
    L.push('');
    L.push(`B's p99 under attack / idle: ${fmt(ratio, 2)} × (target ≤ ${P99_RATIO_TARGET} ×, no failed request, B's connection acknowledged) ${verdict(met)}`);
    say('');
    for (const l of L) say(l);
    return 0;
  } finally {
    if (prepared) await closeAttack(prepared);
    await inst?.close();
  }
}

function answers(o: AttackOutcome): string {
  return Object.entries(o.answers)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:attack: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
