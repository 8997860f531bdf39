import { describe, expect, it } from '@jest/globals';
import { RUN_ITEMS_PAGE_MAX } from '@weft/contract';
import { RUN_PAGE, restOfPages } from './run-pages.js';

/** `total` items (ids t0000…) served in pages of RUN_PAGE after an item, recording each cursor asked for. */
function pagedItems(total: number) {
  const asked: string[] = [];
  const ids = [...Array(total).keys()].map((i) => `t${String(i).padStart(4, '0')}`);
  const nextPage = async (last: { id: string }) => {
    asked.push(last.id);
    const start = ids.indexOf(last.id) + 1;
    return ids.slice(start, start + RUN_PAGE).map((id) => ({ id }));
  };
  return { nextPage, asked, ids };
}

describe("a run's tasks and history, page after page", () => {
  it('asks for pages the API serves', () => {
    expect(RUN_PAGE).toBeGreaterThan(0);
    expect(RUN_PAGE).toBeLessThanOrEqual(RUN_ITEMS_PAGE_MAX);
  });

  it('reads the pages after a full first page until a short one, each item once', async () => {
    const { nextPage, asked, ids } = pagedItems(2 * RUN_PAGE + 7);
    const first = ids.slice(0, RUN_PAGE).map((id) => ({ id }));
    const all = await restOfPages(first, nextPage);
    expect(all.map((t) => t.id)).toEqual(ids);
    expect(asked).toEqual([ids[RUN_PAGE - 1], ids[2 * RUN_PAGE - 1]]);
  });

  it('stops after an empty page when the items are a whole number of pages', async () => {
    const { nextPage, asked, ids } = pagedItems(RUN_PAGE);
    const all = await restOfPages(
      ids.map((id) => ({ id })),
      nextPage,
    );
    expect(all.map((t) => t.id)).toEqual(ids);
    expect(asked).toEqual([ids[RUN_PAGE - 1]]);
  });

  it('asks nothing more when the first page is short', async () => {
    const { nextPage, asked } = pagedItems(3);
    expect(await restOfPages([{ id: 'a' }], nextPage)).toEqual([{ id: 'a' }]);
    expect(asked).toEqual([]);
  });
});
