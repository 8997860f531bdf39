import { describe, expect, it } from '@jest/globals';
import { orderTasks } from './run.mapper.js';

type Row = { id: string; nodeId: string; iteration: number | null };
const row = (id: string, nodeId: string, iteration: number | null = null): Row => ({ id, nodeId, iteration });

describe("a run's tasks in display order", () => {
  it("puts a for_each node's iterations, by index, right after its aggregate, whatever order they were read in", () => {
    // One event creates the aggregate and its iterations with the same created_at: random ids
    // then order them any way, here iterations first and out of index order.
    const rows = [row('a', 'start'), row('i2', 'fetch', 2), row('i0', 'fetch', 0), row('agg', 'fetch'), row('i1', 'fetch', 1), row('b', 'notify')];
    expect(orderTasks(rows).map((t) => t.id)).toEqual(['a', 'agg', 'i0', 'i1', 'i2', 'b']);
  });

  it('keeps ordinary tasks in the order given and leaves the input untouched', () => {
    const rows = [row('c', 'ship'), row('a', 'fetch'), row('b', 'approve')];
    expect(orderTasks(rows).map((t) => t.id)).toEqual(['c', 'a', 'b']);
    expect(rows.map((t) => t.id)).toEqual(['c', 'a', 'b']);
  });

  it('keeps iterations without an aggregate together where the first of them was, by index', () => {
    const rows = [row('a', 'start'), row('i1', 'fetch', 1), row('b', 'other'), row('i0', 'fetch', 0)];
    expect(orderTasks(rows).map((t) => t.id)).toEqual(['a', 'i0', 'i1', 'b']);
  });

  it('orders iterations by number, not as text (10 after 9)', () => {
    const rows = [row('agg', 'fetch'), ...[10, 9, 1, 0].map((i) => row(`i${i}`, 'fetch', i))];
    expect(orderTasks(rows).map((t) => t.id)).toEqual(['agg', 'i0', 'i1', 'i9', 'i10']);
  });
});
