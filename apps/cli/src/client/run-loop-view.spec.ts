import { describe, expect, it } from '@jest/globals';
import { definitionAttemptLimits } from './attempts.js';
import { inLoopOrder, taskName } from './loop-tasks.js';
import { runStatusTable, runStatusView, type RunStatusRun } from './run-view.js';
import { historyTable, type HistoryEvent } from './run-history.js';
import { printChanges, type TaskRow } from './run-watch.js';

/** A task as `run-status` reads it, COMPLETED at its first attempt unless `over` says otherwise. */
function task(over: Record<string, unknown> & { nodeId: string; loopIteration?: number }) {
  const t = { id: `t-${String(over.nodeId)}-${String(over.loopIteration)}-${String(over.iteration)}`, nodeType: 'HTTP', status: 'COMPLETED', attempt: 0 };
  return { ...t, attemptLimit: null, error: null, awaitedSignal: null, iteration: null, waitReason: null, waitDetail: null, decision: null, ...over };
}

/** The run's graph as `run-status` reads it: check, wait_a_bit and fan are in poll's body. */
const graph = {
  nodes: ['start', 'poll', 'check', 'wait_a_bit', 'fan'].map((id) => ({ id, loop: ['check', 'wait_a_bit', 'fan'].includes(id) ? 'poll' : null })),
};

/** The `run-status` table of a RUNNING run with `tasks`, spaces squeezed. */
function statusTable(tasks: Record<string, unknown>[], limits = new Map<string, number>()): string[] {
  const run = { id: 'r1', workflowId: 'jobs', version: 1, status: 'RUNNING', createdAt: '2030-01-01T00:00:00Z', finishedAt: null, tasks, children: [], graph };
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

/**
 * A poll in its third iteration (0-based 2): check retried there, wait_a_bit not created yet. In
 * the API's order: by creation time, ties by node id, so check of iteration 0 comes before the
 * loop's task created with it, and check of iteration 2 before wait_a_bit of iteration 1.
 */
const polling = [
  task({ nodeId: 'start' }),
  task({ nodeId: 'check', loopIteration: 0 }),
  task({ nodeId: 'poll', nodeType: 'DO_WHILE', status: 'RUNNING', loopIteration: 2 }),
  task({ nodeId: 'wait_a_bit', nodeType: 'WAIT', loopIteration: 0 }),
  task({ nodeId: 'check', loopIteration: 1 }),
  task({ nodeId: 'check', status: 'RUNNING', attempt: 1, loopIteration: 2 }),
  task({ nodeId: 'wait_a_bit', nodeType: 'WAIT', loopIteration: 1 }),
];

describe('the tasks of a DO_WHILE loop in the CLI', () => {
  it('names a body task with its iteration counted from 1, and leaves other tasks as they were', () => {
    expect(taskName({ nodeId: 'check', nodeType: 'HTTP', loopIteration: 1 })).toBe('check (iteration 2)');
    expect(taskName({ nodeId: 'fan', nodeType: 'CODE', iteration: 3, loopIteration: 0 })).toBe('fan[3] (iteration 1)');
    expect(taskName({ nodeId: 'poll', nodeType: 'DO_WHILE', loopIteration: 2 })).toBe('poll');
    expect(taskName({ nodeId: 'fan', iteration: 3 })).toBe('fan[3]');
  });

  it("lists every iteration's body tasks under the loop in run-status, the loop's row saying its iteration", () => {
    const lines = statusTable(polling, new Map([['check', 3]]));
    const rows = lines.slice(lines.findIndex((l) => l.startsWith('NODE')) + 1).filter(Boolean);
    expect(rows).toEqual([
      'start COMPLETED 1',
      'poll RUNNING - iteration 3',
      'check (iteration 1) COMPLETED 1 of 3',
      'wait_a_bit (iteration 1) COMPLETED -',
      'check (iteration 2) COMPLETED 1 of 3',
      'wait_a_bit (iteration 2) COMPLETED -',
      'check (iteration 3) RUNNING 2 of 3',
    ]);
    // -o json keeps the API's 0-based loop iteration on each task.
    const view = runStatusView({ id: 'r1', status: 'RUNNING', tasks: polling, children: [], graph } as unknown as RunStatusRun, null);
    expect((view.tasks as { nodeId: string; loopIteration: number }[]).map((t) => `${t.nodeId}:${t.loopIteration}`)).toContain('check:2');
  });

  it("lists the body tasks of a loop's last 3 iterations, and says which earlier ones it left out", () => {
    const rounds = [0, 1, 2, 3, 4].flatMap((i) => [
      task({ nodeId: 'check', loopIteration: i }),
      task({ nodeId: 'wait_a_bit', nodeType: 'WAIT', loopIteration: i }),
    ]);
    const lines = statusTable([task({ nodeId: 'poll', nodeType: 'DO_WHILE', loopIteration: 4 }), ...rounds]);
    const rows = lines.slice(lines.findIndex((l) => l.startsWith('NODE')) + 1).filter(Boolean);
    expect(rows.map((r) => r.replace(/ COMPLETED .*$/, ''))).toEqual([
      'poll',
      '… iterations 1 to 2 not shown (4 tasks; -o json lists every task)',
      'check (iteration 3)',
      'wait_a_bit (iteration 3)',
      'check (iteration 4)',
      'wait_a_bit (iteration 4)',
      'check (iteration 5)',
      'wait_a_bit (iteration 5)',
    ]);
  });

  it("counts a for_each body node's iterations per loop iteration", () => {
    const tasks = [
      task({ nodeId: 'fan', loopIteration: 0 }),
      task({ nodeId: 'fan', iteration: 0, loopIteration: 0 }),
      task({ nodeId: 'fan', iteration: 1, loopIteration: 0 }),
      task({ nodeId: 'fan', status: 'RUNNING', loopIteration: 1 }),
      task({ nodeId: 'fan', status: 'RUNNING', iteration: 0, loopIteration: 1 }),
    ];
    const rows = statusTable(tasks).filter((l) => l.startsWith('fan'));
    expect(rows).toEqual(['fan (iteration 1) COMPLETED - ×2: 2 completed', 'fan (iteration 2) RUNNING - ×1: 1 running']);
  });

  it("gives a watch a line for each iteration's body task and each iteration the loop starts", () => {
    const seen = new Map<string, string>();
    const first = stdoutOf(() => printChanges(polling.slice(0, 4) as unknown as TaskRow[], seen, undefined));
    expect(first.split('\n').filter(Boolean)).toEqual([
      'start: COMPLETED',
      'check (iteration 1): COMPLETED',
      'poll: RUNNING (iteration 3)',
      'wait_a_bit (iteration 1): COMPLETED',
    ]);
    const next = [...polling.slice(0, 4), task({ nodeId: 'check', loopIteration: 1 })];
    next[2] = task({ nodeId: 'poll', nodeType: 'DO_WHILE', status: 'RUNNING', loopIteration: 3 });
    expect(stdoutOf(() => printChanges(next as unknown as TaskRow[], seen, undefined))).toBe('poll: RUNNING (iteration 4)\ncheck (iteration 2): COMPLETED\n');
  });

  it('leaves the order alone without a graph, and body tasks of a loop whose own task is missing in place', () => {
    const bodyFirst = [task({ nodeId: 'check', loopIteration: 1 }), task({ nodeId: 'check', loopIteration: 0 })];
    expect(inLoopOrder(bodyFirst, new Map([['check', 'poll']])).map((t) => t.loopIteration)).toEqual([1, 0]);
    expect(inLoopOrder(polling, new Map()).map((t) => t.nodeId)).toEqual(polling.map((t) => t.nodeId));
  });

  it("reads the attempt limits of a loop's body nodes from the definition", async () => {
    const def = {
      nodes: [
        { node_id: 'poll', type: 'DO_WHILE', spec: { body: { nodes: [{ node_id: 'check', type: 'HTTP', retry: { max_attempts: 4 } }] }, max_iterations: 5 } },
      ],
    };
    expect((await definitionAttemptLimits(def)).get('check')).toBe(4);
  });
});

describe('the history of a DO_WHILE loop in the CLI', () => {
  it("names a body node's report with the iteration its payload says, counted from 1", () => {
    const at = '2030-01-01T00:00:00.000Z';
    const event = (seq: number, nodeId: string, payload: Record<string, unknown>) =>
      ({ seq, type: 'NodeCompleted', at, nodeId, attempt: 0, payload, actions: [], ignored: null, error: null }) as HistoryEvent;
    const rows = historyTable([event(1, 'check', { loopIteration: 1 }), event(2, 'fan', { iteration: 3, loopIteration: 0 }), event(3, 'start', {})], undefined)
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s{2,}/)[3]);
    expect(rows).toEqual(['check (iteration 2)', 'fan[3] (iteration 1)', 'start']);
  });
});
