import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';

/** Each problem as `path: message`. */
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

/** One node `n` of `type` with `extra` fields. */
function one(type: string, extra: Record<string, unknown>): unknown {
  const spec: Record<string, unknown> =
    type === 'HTTP' ? { url: 'https://pay.example.com' } : type === 'CODE' ? { code: 'def main(x): return x' } : type === 'WAIT' ? { duration_seconds: 1 } : {};
  return { nodes: [{ node_id: 'n', type, ...(type === 'CODE' ? { runtime: 'python' } : {}), spec, ...extra }], edges: [] };
}

describe('on_exhausted at publish', () => {
  it('accepts fail and pause on HTTP and CODE nodes', () => {
    for (const type of ['HTTP', 'CODE']) {
      for (const v of ['fail', 'pause']) expect(messages(one(type, { on_exhausted: v }))).toEqual([]);
    }
  });

  it('refuses another value, naming the path and the values allowed', () => {
    expect(messages(one('HTTP', { on_exhausted: 'retry' }))).toEqual(['nodes[0].on_exhausted: on_exhausted must be fail or pause, got "retry"']);
    expect(messages(one('HTTP', { on_exhausted: true }))).toEqual(['nodes[0].on_exhausted: on_exhausted must be fail or pause, got true']);
  });

  it('refuses it on a node no worker runs', () => {
    expect(messages(one('WAIT', { on_exhausted: 'pause' }))).toEqual([
      'nodes[0].on_exhausted: on_exhausted applies to HTTP, CODE and SUBWORKFLOW nodes only, not to a WAIT node',
    ]);
  });

  it('refuses pause with for_each', () => {
    const def = {
      nodes: [{ node_id: 'n', type: 'HTTP', spec: { url: 'https://x/{{ item }}' }, for_each: '{{ input.items }}', on_exhausted: 'pause' }],
      edges: [],
    };
    expect(messages(def)).toEqual(['nodes[0].on_exhausted: on_exhausted: pause cannot be used with for_each: a failed iteration settles its node on its own']);
  });
});

describe('timeout_seconds at publish', () => {
  const withTimeout = (t: unknown) => ({ timeout_seconds: t, nodes: [{ node_id: 'n', type: 'WAIT', spec: { duration_seconds: 1 } }], edges: [] });

  it('accepts an integer from 1 to 365 days', () => {
    for (const t of [1, 3600, 31_536_000]) expect(messages(withTimeout(t))).toEqual([]);
  });

  it('refuses anything else, naming the bounds', () => {
    for (const t of [0, -1, 1.5, 31_536_001, '60', null]) {
      expect(messages(withTimeout(t))).toEqual([`timeout_seconds: timeout_seconds must be an integer from 1 to 31536000 (365 days); got ${JSON.stringify(t)}`]);
    }
  });
});

describe('schedule_to_start_seconds at publish', () => {
  it('accepts an integer from 1 to 365 days on HTTP and CODE nodes', () => {
    for (const type of ['HTTP', 'CODE']) for (const v of [1, 31_536_000]) expect(messages(one(type, { schedule_to_start_seconds: v }))).toEqual([]);
  });

  it('refuses a value out of bounds, and a node no worker runs', () => {
    expect(messages(one('HTTP', { schedule_to_start_seconds: 0 }))).toEqual([
      'nodes[0].schedule_to_start_seconds: schedule_to_start_seconds must be an integer from 1 to 31536000 (365 days); got 0',
    ]);
    expect(messages(one('CODE', { schedule_to_start_seconds: 2.5 }))).toEqual([
      'nodes[0].schedule_to_start_seconds: schedule_to_start_seconds must be an integer from 1 to 31536000 (365 days); got 2.5',
    ]);
    expect(messages(one('WAIT', { schedule_to_start_seconds: 5 }))).toEqual([
      'nodes[0].schedule_to_start_seconds: schedule_to_start_seconds applies to HTTP and CODE nodes only, not to a WAIT node',
    ]);
  });
});
