/**
 * The attacking tenant of `npm run bench:attack`, as a process of its own, so that its sockets,
 * its JSON and its timers never share an event loop with the neighbour whose latency the bench
 * measures. It reads one JSON object from its first argument — `{plan, sizes, seconds, only}`
 * (see bench/attack-mix.ts) — runs those attacks and prints their outcomes as one JSON line.
 */
import { runAttacks, type AttackOutcome, type AttackPlan, type AttackSizes } from './attack-mix.js';

const { plan, sizes, seconds, only } = JSON.parse(process.argv[2] ?? '{}') as {
  plan: AttackPlan;
  sizes: AttackSizes;
  seconds: number;
  only: AttackOutcome['name'][];
};
runAttacks(plan, sizes, seconds, only).then(
  (outcomes) => {
    process.stdout.write(`${JSON.stringify(outcomes)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`attack runner: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
