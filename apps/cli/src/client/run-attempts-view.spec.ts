import { describe, expect, it } from '@jest/globals';
import { definitionAttemptLimits } from './attempts.js';
import { eventDetail, historyTable, type HistoryEvent } from './run-history.js';
import { runStatusTable, runStatusView, type RunStatusRun } from './run-view.js';
import { printChanges, type TaskRow } from './run-watch.js';

/** A history event of `over`'s fields, a NodeCompleted without node by default. */
function event(over: Partial<HistoryEvent>): HistoryEvent {
  return {
    seq: 1,
    type: 'NodeCompleted',
    at: '2030-01-01T00:00:00.000Z',
    nodeId: null,
    attempt: null,
    payload: {},
    actions: [],
    ignored: null,
    error: null,
    ...over,
  };
}

/** A task as `run-status` reads it, COMPLETED at its first attempt unless `over` says otherwise. */
function task(over: Record<string, unknown>) {
  const t = { id: `t-${String(over.nodeId)}-${String(over.iteration)}`, nodeType: 'HTTP', status: 'COMPLETED', attempt: 0, attemptLimit: null, error: null };
  return { ...t, awaitedSignal: null, iteration: null, waitReason: null, waitDetail: null, decision: null, ...over };
}

/** The `run-status` table of a FAILED run with `tasks`. */
function statusTable(tasks: Record<string, unknown>[], limits: Map<string, number>): string[] {
  const run = {
    id: 'r1',
    workflowId: 'orders',
    version: 1,
    status: 'FAILED',
    createdAt: '2030-01-01T00:00:00Z',
    finishedAt: '2030-01-01T00:00:09Z',
    tasks,
    children: [],
  };
  return runStatusTable(runStatusView(run as unknown as RunStatusRun, null), limits, Date.parse('2030-01-01T00:00:10Z'))
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim());
}

/** What `fn` writes on stdout. */
function stdoutOf(fn: () => void): string {
  let out = '';
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  try {
    fn();
  } finally {
    process.stdout.write = write;
  }
  return out;
}

describe('attempts a retry or resume granted', () => {
  const limits = new Map([['check', 1]]);

  it("run-status counts a re-run iteration's attempts against its own limit, not the node's", () => {
    const lines = statusTable(
      [
        task({ nodeId: 'check', status: 'FAILED', error: '1 iteration failed' }),
        task({ nodeId: 'check', iteration: 0, status: 'FAILED', attempt: 2, attemptLimit: 3, error: 'still down' }),
        task({ nodeId: 'check', iteration: 1, status: 'COMPLETED' }),
      ],
      limits,
    );
    expect(lines).toContain('check[0] 3 of 3 still down');
    expect(lines.join('\n')).not.toContain('of 1');
  });

  it('watch counts them against the same limit', () => {
    const out = stdoutOf(() =>
      printChanges([task({ nodeId: 'check', status: 'QUEUED', attempt: 1, attemptLimit: 2 }) as unknown as TaskRow], new Map(), limits),
    );
    expect(out).toBe('check: QUEUED (attempt 2 of 2)\n');
  });

  it('history counts the attempts after the grant against the granted limit, those before against the node’s', () => {
    const failed = (attempt: number) => event({ type: 'NodeFailed', nodeId: 'check', attempt, payload: { taskId: 'i0', iteration: 0, error: 'down' } });
    const rows = historyTable([failed(0), failed(1)], limits, new Map([['i0', 2]]))
      .split('\n')
      .map((l) => l.split(/\s{2,}/)[4]);
    expect(rows.slice(1, 3)).toEqual(['1 of 1', '2 of 2']);
  });
});

describe('the finally step', () => {
  it("shows its attempts with the limit of the finally step's retry policy", async () => {
    const limits = await definitionAttemptLimits({
      nodes: [{ node_id: 'charge', type: 'HTTP', spec: { url: 'https://pay.example.com' } }],
      finally: { node_id: 'cleanup', type: 'HTTP', spec: { url: 'https://tidy.example.com' }, retry: { max_attempts: 3 } },
    });
    expect([...limits]).toEqual([
      ['charge', 1],
      ['cleanup', 3],
    ]);
    expect(statusTable([task({ nodeId: 'cleanup', status: 'FAILED', error: 'boom' })], new Map(limits))).toContain('cleanup FAILED 1 of 3 boom');
    expect(stdoutOf(() => printChanges([task({ nodeId: 'cleanup', status: 'QUEUED', attempt: 1 }) as unknown as TaskRow], new Map(), limits))).toBe(
      'cleanup: QUEUED (attempt 2 of 3)\n',
    );
  });
});

describe('a SWITCH task in run-status', () => {
  const decided = (decision: Record<string, unknown>) =>
    statusTable([task({ nodeId: 'route', nodeType: 'SWITCH', decision: { default: null, defaultTaken: false, conditions: [], ...decision } })], new Map());

  it('names the branches it took', () => {
    expect(decided({ branches: ['big'] })).toContain('route COMPLETED - taken: big');
    expect(decided({ branches: ['a', 'b'] })).toContain('route COMPLETED - taken: a, b');
  });

  it('says when its default was taken, or no branch', () => {
    expect(decided({ branches: ['other'], default: 'other', defaultTaken: true })).toContain('route COMPLETED - default taken: other');
    expect(decided({ branches: [] })).toContain('route COMPLETED - no branch taken: conditions evaluated: (none)');
  });
});

describe('weft history', () => {
  it('says when a retry re-runs the failed iterations only', () => {
    const retried = (payload: Record<string, unknown>) => eventDetail(event({ type: 'RunRetried', payload }));
    expect(retried({ fromNodeId: 'check', version: 1 })).toBe('from check on version 1');
    expect(retried({ fromNodeId: 'check', version: 1, failedIterationsOnly: true })).toBe('from check, failed iterations only, on version 1');
  });
});
