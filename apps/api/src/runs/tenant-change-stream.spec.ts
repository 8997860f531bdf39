import { describe, expect, it } from '@jest/globals';
import type { RunStatus } from '@weft/engine';
import { TENANT_STREAM_PENDING_MAX, TenantChangeFeed, type TenantChangeStream } from './tenant-change-stream.js';

const change = (runId: string, seq: number, status = 'RUNNING') => ({ runId, seq, status: status as RunStatus });

/** A stream's `next()` left waiting by {@link drain}: the next drain takes it up. */
const pending = new WeakMap<TenantChangeStream, ReturnType<TenantChangeStream['next']>>();

/** What a stream has ready now, without waiting: `runId@seq` each. */
async function drain(s: TenantChangeStream): Promise<string[]> {
  const got: string[] = [];
  for (;;) {
    const waiting = pending.get(s) ?? s.next();
    pending.delete(s);
    const next = await Promise.race([waiting, new Promise<'idle'>((r) => setImmediate(() => r('idle')))]);
    if (next === 'idle') {
      pending.set(s, waiting);
      return got;
    }
    if (next.done) return got;
    got.push(`${next.value.runChanged.runId}@${next.value.runChanged.seq}`);
  }
}

describe('one change feed per tenant, read by many subscribers', () => {
  it('keeps a change once for every subscriber; each gets each run once, in its latest state, in the order runs first changed', async () => {
    const feed = new TenantChangeFeed(() => undefined);
    const fast = feed.open();
    const slow = feed.open();
    feed.push(change('a', 1));
    expect(await drain(fast)).toEqual(['a@1']);
    feed.push(change('b', 1));
    feed.push(change('a', 2));
    feed.push(change('c', 1));
    feed.push(change('a', 3));
    expect(await drain(fast)).toEqual(['b@1', 'a@3', 'c@1']);
    expect(await drain(slow)).toEqual(['a@3', 'b@1', 'c@1']);
    // A change after the one already sent ahead is sent again; an older one is never kept.
    feed.push(change('a', 4));
    expect(feed.push(change('b', 0))).toBe(false);
    expect(await drain(slow)).toEqual(['a@4']);
    expect(await drain(fast)).toEqual(['a@4']);
  });

  it('reads from the next change on, wakes a waiting reader, and ends a waiting reader at once', async () => {
    const emptied: string[] = [];
    const feed = new TenantChangeFeed(() => emptied.push('empty'));
    feed.push(change('old', 1));
    const s = feed.open();
    const waiting = s.next();
    feed.push(change('new', 1));
    expect((await waiting).value).toEqual({ runChanged: change('new', 1) });
    const ended = s.next();
    await s.return();
    expect(await ended).toEqual({ value: undefined, done: true });
    expect(emptied).toEqual(['empty']);
    expect(feed.subscribers).toBe(0);
  });

  it('drops what every reader has read, and lets a reader too far behind skip the oldest changes', async () => {
    const feed = new TenantChangeFeed(() => undefined);
    const reader = feed.open();
    const stalled = feed.open();
    for (let i = 0; i < TENANT_STREAM_PENDING_MAX; i++) feed.push(change(`r${i}`, 1));
    expect(feed.head - feed.tail).toBe(TENANT_STREAM_PENDING_MAX);
    expect(await drain(reader)).toHaveLength(TENANT_STREAM_PENDING_MAX);
    feed.push(change('one-more', 1));
    // The stalled reader holds nothing per change; past the bound it loses the older half.
    expect(feed.head - feed.tail).toBe(TENANT_STREAM_PENDING_MAX / 2);
    const late = await drain(stalled);
    expect(late).toHaveLength(TENANT_STREAM_PENDING_MAX / 2);
    expect(late.at(-1)).toBe('one-more@1');
    expect(await drain(reader)).toEqual(['one-more@1']);
  });
});
