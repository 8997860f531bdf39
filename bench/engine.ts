/**
 * `npm run bench:engine`: the state machine alone, no I/O (see engine-bench.ts). Prints the
 * figures and the target, writes them to bench/results/engine-latest.txt; exits 0 whether or not
 * the target is met.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runEngineBench } from './engine-bench.js';

const results = join(dirname(fileURLToPath(import.meta.url)), '../../bench/results');

runEngineBench((l) => process.stdout.write(`${l}\n`)).then(
  (r) => {
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'engine-latest.txt'), `${r.lines.join('\n')}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`bench:engine: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
