import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';

/** A valid one-node definition plus `extra` fields on the node. */
function oneNode(extra: Record<string, unknown>): unknown {
  return { nodes: [{ node_id: 'a', type: 'HTTP', spec: { url: 'https://x' }, ...extra }], edges: [] };
}
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

describe('tolerated_failures at publish', () => {
  it('accepts tolerated_failures as a count or a percentage with reducers and max_concurrency, and names a bad one', () => {
    for (const tf of [0, 2, 10_000, '0%', '20%', '12.5%', '33.33%', '100%']) {
      expect(messages(oneNode({ for_each: '{{ input.items }}', tolerated_failures: tf, max_concurrency: 2, reducers: { n: 'add' } }))).toEqual([]);
    }
    expect(messages(oneNode({ for_each: '{{ input.items }}', tolerated_failures: -1 }))).toEqual([
      'nodes[0].tolerated_failures: tolerated_failures must be an integer from 0 to 10000, or a percentage such as "20%"; got -1',
    ]);
    expect(messages(oneNode({ for_each: '{{ input.items }}', tolerated_failures: 1.5 }))).toEqual([
      'nodes[0].tolerated_failures: tolerated_failures must be an integer from 0 to 10000, or a percentage such as "20%"; got 1.5',
    ]);
    for (const tf of ['101%', '20', '-5%', '12.345%', ' 20%', '2e1%']) {
      expect(messages(oneNode({ for_each: '{{ input.items }}', tolerated_failures: tf }))).toEqual([
        `nodes[0].tolerated_failures: tolerated_failures must be a percentage from "0%" to "100%" with at most two decimals (e.g. "20%", "12.5%"), or an integer; got ${JSON.stringify(tf)}`,
      ]);
    }
    expect(messages(oneNode({ for_each: '{{ input.items }}', tolerated_failures: true }))).toEqual([
      'nodes[0].tolerated_failures: tolerated_failures must be an integer from 0 to 10000, or a percentage such as "20%"; got a boolean',
    ]);
    expect(messages(oneNode({ tolerated_failures: 1 }))).toEqual([
      'nodes[0].tolerated_failures: tolerated_failures applies to a for_each node only; this node has no for_each',
    ]);
  });
});
