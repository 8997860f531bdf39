/**
 * The correctness checks every engine of the peers bench goes through, for every workflow it ran
 * (warm-up, window and alone): the result holds the step bodies in order, the stub saw each
 * (workflow, step) exactly once, and the engine's own store agrees on the counts.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StubCounts } from './peer-children.js';
import { CHAIN_STEPS, type WorkflowRecord } from './peer-workload.js';

/** What the stub answers for step `i` (1-based) of workflow `key`. */
export function expectedBody(key: string, i: number): { wf: string; step: string } {
  return { wf: key, step: `n${i}` };
}

/** Problems, keeping the count of all and the text of the first few. */
export class Problems {
  readonly list: string[] = [];
  private count = 0;

  constructor(private readonly keep = 20) {}

  add(problem: string): void {
    this.count++;
    if (this.list.length < this.keep) this.list.push(problem);
  }

  /** The problems kept, with a last line counting those left out. */
  done(): string[] {
    return this.count > this.list.length ? [...this.list, `… and ${this.count - this.list.length} more`] : [...this.list];
  }
}

/**
 * Checks each record's error and, where the engine returned them, its bodies: exactly
 * {@link CHAIN_STEPS}, body i being {@link expectedBody}(key, i).
 */
export function checkResults(records: WorkflowRecord[], p: Problems): void {
  for (const r of records) {
    if (r.error) {
      p.add(`workflow ${r.key} (${r.phase}) failed: ${r.error}`);
      continue;
    }
    if (r.bodies === undefined) continue;
    if (!Array.isArray(r.bodies) || r.bodies.length !== CHAIN_STEPS) {
      p.add(`workflow ${r.key}: the result is not ${CHAIN_STEPS} step bodies: ${JSON.stringify(r.bodies).slice(0, 200)}`);
      continue;
    }
    for (let i = 1; i <= CHAIN_STEPS; i++) {
      if (!isDeepStrictEqual(r.bodies[i - 1], expectedBody(r.key, i))) {
        p.add(`workflow ${r.key}: body ${i} is ${JSON.stringify(r.bodies[i - 1])}, expected ${JSON.stringify(expectedBody(r.key, i))}`);
        break;
      }
    }
  }
}

/** Checks that the stub saw each step of each recorded workflow exactly once, and nothing else. */
export function checkStub(records: WorkflowRecord[], stub: StubCounts, p: Problems): void {
  const keys = new Set(records.map((r) => r.key));
  for (const r of records) {
    const seen = stub.counts[r.key] ?? {};
    for (let i = 1; i <= CHAIN_STEPS; i++) {
      const n = seen[`n${i}`] ?? 0;
      if (n !== 1) p.add(`workflow ${r.key}: the stub saw step n${i} ${n} times`);
    }
    const extra = Object.keys(seen).filter((s) => !/^n\d+$/.test(s) || Number(s.slice(1)) < 1 || Number(s.slice(1)) > CHAIN_STEPS);
    if (extra.length) p.add(`workflow ${r.key}: the stub saw unknown steps ${extra.join(', ')}`);
  }
  for (const k of Object.keys(stub.counts)) if (!keys.has(k)) p.add(`the stub saw workflow ${k}, which the bench never started`);
  const expected = records.length * CHAIN_STEPS;
  if (stub.hits !== expected) p.add(`the stub answered ${stub.hits} step GETs; ${records.length} workflows × ${CHAIN_STEPS} = ${expected}`);
}

/** Adds a problem when the engine's store shows `got` of `what` instead of `expected`. */
export function checkCount(what: string, expected: number, got: number, p: Problems): void {
  if (got !== expected) p.add(`the engine's store shows ${got} ${what}; expected ${expected}`);
}
