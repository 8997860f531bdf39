import type { WeftClient } from '@weft/client';

/**
 * Items the CLI asks for per page of `Run.tasks` and `Run.history`: few enough that a page of
 * large inputs and outputs stays under the API's bound on the stored JSON of one answer.
 */
export const RUN_PAGE = 200;

/**
 * Every item of the run's `tasks` or `history`, read with `fields` (which must hold `id` for
 * tasks and `seq` for history, the cursors): `first` is the page the caller already read with
 * `first: RUN_PAGE`; the next pages are read after its last item until a page is short.
 */
export async function restOfPages(c: WeftClient, runId: string, field: 'tasks' | 'history', fields: string, first: any[]): Promise<any[]> {
  const all = [...first];
  const cursor = field === 'tasks' ? { type: 'ID', key: 'id' } : { type: 'Int', key: 'seq' };
  for (let page = first; page.length >= RUN_PAGE; ) {
    const r = await c.request(`query($id: ID!, $after: ${cursor.type}) { run(id: $id) { ${field}(first: ${RUN_PAGE}, after: $after) { ${fields} } } }`, {
      id: runId,
      after: page[page.length - 1][cursor.key],
    });
    page = r.run[field];
    all.push(...page);
  }
  return all;
}
