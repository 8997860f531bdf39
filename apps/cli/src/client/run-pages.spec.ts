import { describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { RUN_PAGE, restOfPages } from './run-pages.js';

/** A client serving `total` tasks (ids t0000…) or events (seq 1…) in pages, recording each request's variables. */
function pagedClient(total: number) {
  const asked: Record<string, unknown>[] = [];
  const ids = [...Array(total).keys()].map((i) => `t${String(i).padStart(4, '0')}`);
  const client = {
    async request(query: string, variables: Record<string, unknown>) {
      asked.push(variables);
      const first = Number(/first: (\d+)/.exec(query)![1]);
      if (query.includes('tasks(')) {
        const start = ids.indexOf(variables.after as string) + 1;
        return { run: { tasks: ids.slice(start, start + first).map((id) => ({ id })) } };
      }
      const after = variables.after as number;
      return { run: { history: ids.slice(after, after + first).map((_, i) => ({ seq: after + i + 1 })) } };
    },
  } as unknown as WeftClient;
  return { client, asked, ids };
}

describe("a run's tasks and history, page after page", () => {
  it('reads the pages after a full first page until a short one, each item once', async () => {
    const { client, asked, ids } = pagedClient(2 * RUN_PAGE + 7);
    const first = ids.slice(0, RUN_PAGE).map((id) => ({ id }));
    const all = await restOfPages(client, 'r1', 'tasks', 'id', first);
    expect(all.map((t) => t.id)).toEqual(ids);
    expect(asked.map((v) => v.after)).toEqual([ids[RUN_PAGE - 1], ids[2 * RUN_PAGE - 1]]);

    const history = await restOfPages(pagedClient(RUN_PAGE + 1).client, 'r1', 'history', 'seq', [...Array(RUN_PAGE).keys()].map((i) => ({ seq: i + 1 })));
    expect(history.map((e) => e.seq)).toEqual([...Array(RUN_PAGE + 1).keys()].map((i) => i + 1));
  });

  it('asks nothing more when the first page is short', async () => {
    const { client, asked } = pagedClient(3);
    expect(await restOfPages(client, 'r1', 'tasks', 'id', [{ id: 'a' }])).toEqual([{ id: 'a' }]);
    expect(asked).toEqual([]);
  });
});
