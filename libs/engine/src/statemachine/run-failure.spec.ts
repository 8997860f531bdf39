import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import { MAX_NODE_ERROR_CHARS, unsuccessfulRunReason } from './run-failure.js';
import { edge, finished, fork, Harness, task } from './testing/harness.js';

describe('a failed run names its failed nodes and their errors', () => {
  it('names the one failed node and its error', () => {
    expect(
      unsuccessfulRunReason([
        { nodeId: 'charge', status: TaskStatus.Failed, error: 'HTTP POST https://pay.example.com/charges returned status 500: {"error":"down"}' },
      ]),
    ).toBe('node charge failed: HTTP POST https://pay.example.com/charges returned status 500: {"error":"down"}');
    expect(unsuccessfulRunReason([{ nodeId: 'charge', status: TaskStatus.Failed }])).toBe('node charge failed');
    expect(unsuccessfulRunReason([{ nodeId: 'ship', status: TaskStatus.Cancelled }])).toBe('node ship was cancelled');
  });

  it('names the first three of several, then counts the others', () => {
    const nodes = ['a', 'b', 'c', 'd', 'e'].map((nodeId) => ({ nodeId, status: TaskStatus.Failed, error: `${nodeId} broke` }));
    expect(unsuccessfulRunReason(nodes.slice(0, 2))).toBe('node a failed: a broke; node b failed: b broke');
    expect(unsuccessfulRunReason(nodes)).toBe('node a failed: a broke; node b failed: b broke; node c failed: c broke; and 2 more');
  });

  it('cuts each error to 1,000 characters, never inside a surrogate pair, so the reason stays bounded', () => {
    expect(MAX_NODE_ERROR_CHARS).toBe(1000);
    const long = unsuccessfulRunReason([{ nodeId: 'a', status: TaskStatus.Failed, error: 'x'.repeat(5000) }]);
    expect(long).toBe(`node a failed: ${'x'.repeat(1000)}…`);
    const emoji = unsuccessfulRunReason([{ nodeId: 'a', status: TaskStatus.Failed, error: `${'x'.repeat(999)}\u{1F600}tail` }]);
    expect(emoji).toBe(`node a failed: ${'x'.repeat(999)}…`);
    const many = Array.from({ length: 50 }, (_, i) => ({ nodeId: `n${i}`.padEnd(128, 'z'), status: TaskStatus.Failed, error: 'y'.repeat(8192) }));
    expect(unsuccessfulRunReason(many).length).toBeLessThan(3500);
  });

  it('through the machine: the failed branches in the order the definition declares them, whatever order they failed in', async () => {
    const h = new Harness(
      [fork('f'), task('a'), task('b'), task('c'), task('d'), task('e')],
      ['a', 'b', 'c', 'd', 'e'].map((to) => edge('f', to)),
    );
    await h.start();
    await h.fail('e', 'e is down');
    await h.fail('c', 'c is down');
    await h.complete('b');
    await h.fail('a', 'a is down');
    const last = await h.fail('d', 'd is down');
    expect(finished(last)).toMatchObject({
      status: RunStatus.Failed,
      reason: 'node a failed: a is down; node c failed: c is down; node d failed: d is down; and 1 more',
    });
  });
});
