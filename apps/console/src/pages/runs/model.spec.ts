import { describe, expect, it } from '@jest/globals';
import {
  awaitedSignal,
  childRunsByNode,
  displayAttempt,
  isActive,
  isCancellable,
  isFinished,
  isPausable,
  iterationsToRetry,
  isResumable,
  newer,
  nodeIds,
  recordChange,
  restOfPages,
  sensitiveNodes,
  withLiveStatus,
} from './model.js';
import type { Graph } from '../../api/graph.js';

describe('childRunsByNode', () => {
  it('maps each child to the node of the task that started it, oldest first', () => {
    const tasks = [
      { id: 't1', nodeId: 'fetch' },
      { id: 't2', nodeId: 'pay' },
      { id: 't3', nodeId: 'fan' },
      { id: 't4', nodeId: 'fan' },
    ];
    const children = [
      { id: 'c1', status: 'FAILED', parentTaskId: 't2', workflowId: 'payment' },
      { id: 'c2', status: 'SUCCEEDED', parentTaskId: 't4', workflowId: 'x' },
      { id: 'c3', status: 'RUNNING', parentTaskId: 't2', workflowId: 'payment' },
      { id: 'c4', status: 'RUNNING', parentTaskId: 't3', workflowId: 'x' },
      { id: 'c5', status: 'RUNNING', parentTaskId: 'gone', workflowId: 'x' },
      { id: 'c6', status: 'RUNNING', parentTaskId: null, workflowId: 'x' },
    ] as const;
    const map = childRunsByNode(tasks, children);
    expect([...map.keys()].sort()).toEqual(['fan', 'pay']);
    expect(map.get('pay')).toEqual([
      { runId: 'c1', status: 'FAILED' },
      { runId: 'c3', status: 'RUNNING' },
    ]);
    expect(map.get('fan')).toEqual([
      { runId: 'c2', status: 'SUCCEEDED' },
      { runId: 'c4', status: 'RUNNING' },
    ]);
  });
  it('is empty without children', () => {
    expect(childRunsByNode([{ id: 't1', nodeId: 'a' }], []).size).toBe(0);
  });
});

describe('sensitiveNodes', () => {
  it('lists the nodes marked sensitive: true, and only those', () => {
    const definition = {
      nodes: [
        { node_id: 'a', type: 'HTTP', sensitive: true },
        { node_id: 'b', type: 'CODE', sensitive: false },
        { node_id: 'c', type: 'CODE', sensitive: null },
        { node_id: 'd', type: 'CODE', sensitive: 'yes' },
      ],
      edges: [],
    };
    expect([...sensitiveNodes(definition)]).toEqual(['a']);
  });
  it("lists a DO_WHILE body's sensitive nodes too", () => {
    const definition = {
      nodes: [
        {
          node_id: 'poll',
          type: 'DO_WHILE',
          spec: {
            body: {
              nodes: [
                { node_id: 'login', type: 'HTTP', sensitive: true },
                { node_id: 'check', type: 'HTTP', sensitive: false },
              ],
            },
            max_iterations: 3,
          },
        },
      ],
      edges: [],
    };
    expect([...sensitiveNodes(definition)]).toEqual(['login']);
  });
  it('is empty for a missing or odd definition', () => {
    expect(sensitiveNodes(undefined).size).toBe(0);
    expect(sensitiveNodes({ nodes: 'x' }).size).toBe(0);
    expect(sensitiveNodes([1, 2]).size).toBe(0);
  });
});

describe('run statuses', () => {
  const ALL = ['QUEUED', 'PENDING', 'RUNNING', 'PAUSED', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
  /** The statuses of ALL for which `test` holds. */
  const where = (test: (status: string) => boolean) => ALL.filter(test);

  it('tell finished runs (retryable) from cancellable ones', () => {
    expect(where(isFinished)).toEqual(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
    expect(where(isCancellable)).toEqual(['PENDING', 'RUNNING', 'PAUSED']);
  });
  it('count a paused run as still going: active, cancellable, not finished', () => {
    expect(where(isActive)).toEqual(['PENDING', 'RUNNING', 'PAUSED']);
    expect(isFinished('PAUSED')).toBe(false);
  });
  it('offer a pause to a pending or running run and a resume to a paused one only', () => {
    expect(where(isPausable)).toEqual(['PENDING', 'RUNNING']);
    expect(where(isResumable)).toEqual(['PAUSED']);
  });
});

describe('awaitedSignal', () => {
  it('is the signal of the first WAITING task that has one', () => {
    expect(
      awaitedSignal([
        { status: 'COMPLETED', awaitedSignal: 'old' },
        { status: 'WAITING', awaitedSignal: null },
        { status: 'WAITING', awaitedSignal: 'approve-7' },
      ]),
    ).toBe('approve-7');
    expect(awaitedSignal([{ status: 'COMPLETED', awaitedSignal: 'old' }])).toBe('');
  });
});

describe('nodeIds', () => {
  it('lists graph nodes in order, then nodes only tasks name, each once', () => {
    const graph = { nodes: [{ id: 'b' }, { id: 'a' }], edges: [] } as unknown as Graph;
    expect(nodeIds({ graph, tasks: [{ nodeId: 'a' }, { nodeId: 'z' }, { nodeId: 'z' }] as never })).toEqual(['b', 'a', 'z']);
  });
});

describe('newer', () => {
  it('keeps the state with the higher seq whichever arrived first', () => {
    const a = { id: 'r', seq: 5 };
    const b = { id: 'r', seq: 3 };
    expect(newer(a, b)).toBe(a);
    expect(newer(b, a)).toBe(a);
    const tie = { id: 'r', seq: 5 };
    expect(newer(a, tie)).toBe(tie);
  });
  it('takes whichever exists, and ignores another run', () => {
    const a = { id: 'r', seq: 1 };
    expect(newer(undefined, a)).toBe(a);
    expect(newer(a, null)).toBe(a);
    expect(newer(a, { id: 'other', seq: 9 })).toBe(a);
    expect(newer(undefined, undefined)).toBeUndefined();
  });
});

describe('live statuses', () => {
  it('keep the newest change per run and override only rows older than it', () => {
    let live = recordChange(new Map(), { runId: 'r1', status: 'RUNNING', seq: 2 });
    live = recordChange(live, { runId: 'r1', status: 'SUCCEEDED', seq: 4 });
    const stale = recordChange(live, { runId: 'r1', status: 'RUNNING', seq: 3 });
    expect(stale).toBe(live);
    expect(live.get('r1')?.status).toBe('SUCCEEDED');

    const row = { id: 'r1', status: 'RUNNING' as const, seq: 2, workflowId: 'w' };
    expect(withLiveStatus(row, live)).toEqual({ ...row, status: 'SUCCEEDED' });
    const fresher = { id: 'r1', status: 'FAILED' as const, seq: 6 };
    expect(withLiveStatus(fresher, live)).toBe(fresher);
    const other = { id: 'r2', status: 'PENDING' as const, seq: 0 };
    expect(withLiveStatus(other, live)).toBe(other);
  });
});

describe('displayAttempt', () => {
  it("shows the API's 0-based attempt 1-based, as the CLI and the logs do", () => {
    expect(displayAttempt(0)).toBe(1);
    expect(displayAttempt(2)).toBe(3);
  });
});

describe('restOfPages', () => {
  const items = [...Array(23).keys()];
  const after = (last: number) => Promise.resolve(items.slice(last + 1, last + 11));

  it('reads the pages after a full first page until a short one, each item once', async () => {
    expect([...items.slice(0, 10), ...(await restOfPages(items.slice(0, 10), 10, after))]).toEqual(items);
  });

  it('reads nothing when the first page is short', async () => {
    let asked = 0;
    expect(await restOfPages([1, 2], 10, async () => (asked++, []))).toEqual([]);
    expect(asked).toBe(0);
  });
});

describe('iterationsToRetry', () => {
  it("lists a for_each node's failed, skipped and cancelled iterations, ascending, and nothing for other nodes", () => {
    const tasks: Parameters<typeof iterationsToRetry>[0] = [
      { nodeId: 'fetch', iteration: null, status: 'FAILED', failedIterations: [2] },
      { nodeId: 'fetch', iteration: 3, status: 'SKIPPED', failedIterations: null },
      { nodeId: 'fetch', iteration: 0, status: 'COMPLETED', failedIterations: null },
      { nodeId: 'fetch', iteration: 2, status: 'FAILED', failedIterations: null },
      { nodeId: 'fetch', iteration: 1, status: 'CANCELLED', failedIterations: null },
      { nodeId: 'report', iteration: null, status: 'FAILED', failedIterations: null },
    ];
    expect(iterationsToRetry(tasks, 'fetch')).toEqual([1, 2, 3]);
    expect(iterationsToRetry(tasks, 'report')).toEqual([]);
    expect(iterationsToRetry([{ nodeId: 'fetch', iteration: null, status: 'COMPLETED', failedIterations: [4, 1] }], 'fetch')).toEqual([1, 4]);
  });
});
