import { describe, expect, it } from '@jest/globals';
import { RUN_PAGE } from '../apps/cli/src/client/run-pages.js';
import { followRun, WATCH_QUERY, type Subscriber } from './peer-watch.js';

/** A subscriber that feeds the given payloads, stopping where the callback says to. */
function fake(payloads: unknown[]): Subscriber & { asked: { query: string; variables: Record<string, unknown> }[]; disposed: number } {
  const f = {
    asked: [] as { query: string; variables: Record<string, unknown> }[],
    disposed: 0,
    subscribe(query: string, variables: Record<string, unknown>, onNext: (data: any) => void | boolean) {
      f.asked.push({ query, variables });
      const done = (async () => {
        for (const p of payloads) if (onNext(p) === false) return;
      })();
      return { done, dispose: () => f.disposed++ };
    },
  };
  return f;
}

describe('the watched row of the peers bench', () => {
  it('follows a run with the CLI watch selection until a payload shows its end', async () => {
    const client = fake([
      { runUpdated: { status: 'RUNNING' } },
      { runUpdated: { status: 'RUNNING' } },
      { runUpdated: { status: 'SUCCEEDED' } },
      { runUpdated: { status: 'RUNNING' } },
    ]);
    const r = await followRun(client, 'r1').done;
    expect(r).toEqual({ status: 'SUCCEEDED', payloads: 3 });
    expect(client.asked).toEqual([{ query: WATCH_QUERY, variables: { id: 'r1', page: RUN_PAGE } }]);
    expect(WATCH_QUERY).toContain('runUpdated(runId: $id)');
    expect(WATCH_QUERY).toContain('tasks(first:');
  });

  it('reports the last status seen when the subscription ends first', async () => {
    expect(await followRun(fake([{ runUpdated: { status: 'RUNNING' } }]), 'r2').done).toEqual({ status: 'RUNNING', payloads: 1 });
  });
});
