/**
 * Items the CLI asks for per page of `Run.tasks` and `Run.history` (the `$page` of the run
 * queries): few enough that a page of large inputs and outputs stays under the API's bound on
 * the stored JSON of one answer; at most the API's `RUN_ITEMS_PAGE_MAX` (run-pages.spec.ts checks).
 */
export const RUN_PAGE = 200;

/**
 * Every item of a run's `tasks` or `history`: `first` is the page the caller already read with
 * `first: RUN_PAGE`; `nextPage` reads the page after an item (a task's `id`, an event's `seq`, the
 * cursors), called after the last item of each page until a page is short.
 */
export async function restOfPages<T>(first: readonly T[], nextPage: (last: T) => Promise<readonly T[]>): Promise<T[]> {
  const all = [...first];
  for (let page = first; page.length >= RUN_PAGE;) {
    page = await nextPage(page[page.length - 1]!);
    all.push(...page);
  }
  return all;
}
