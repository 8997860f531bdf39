import { describe, expect, it } from '@jest/globals';
import { recentIterations, runLoops, taskRows, type LoopTask } from './loops.js';

const graph = {
  nodes: [
    { id: 'start', type: 'HTTP', loop: null, maxIterations: null },
    { id: 'poll', type: 'DO_WHILE', loop: null, maxIterations: 5 },
    { id: 'check', type: 'HTTP', loop: 'poll', maxIterations: null },
    { id: 'wait_a_bit', type: 'WAIT', loop: 'poll', maxIterations: null },
    { id: 'report', type: 'CODE', loop: null, maxIterations: null },
  ],
} as unknown as Parameters<typeof runLoops>[0];

const t = (id: string, nodeId: string, loopIteration: number | null = null): LoopTask => ({ id, nodeId, loopIteration });

/** What taskRows gives, in short: `id` for a task (`  id` inside a loop), `# loop i (n)` for an iteration's head. */
const shape = (rows: ReturnType<typeof recentIterations>) =>
  rows.map((r) =>
    r.kind === 'earlier'
      ? `… ${r.loop} ${r.iterations} (${r.tasks})`
      : r.kind === 'iteration'
        ? `# ${r.loop} ${r.iteration} (${r.tasks})`
        : `${r.loop ? '  ' : ''}${r.task.id}`,
  );

describe('the task table of a run with a loop', () => {
  it('reads the loops and their bounds from the graph', () => {
    const loops = runLoops(graph);
    expect([...loops.loopOf]).toEqual([
      ['check', 'poll'],
      ['wait_a_bit', 'poll'],
    ]);
    expect([...loops.maxIterations]).toEqual([['poll', 5]]);
    expect(runLoops(null).loopOf.size).toBe(0);
  });

  it("puts each iteration's body tasks under the loop's task, iterations ascending, whatever order the tasks came in", () => {
    const tasks = [
      t('1', 'start'),
      t('2', 'poll', 2),
      t('3', 'check', 0),
      t('4', 'wait_a_bit', 0),
      // A later iteration's task listed before an earlier one's: still grouped by iteration.
      t('7', 'check', 2),
      t('5', 'check', 1),
      t('6', 'wait_a_bit', 1),
      t('8', 'report'),
    ];
    expect(shape(taskRows(tasks, runLoops(graph)))).toEqual(['1', '2', '# poll 0 (2)', '  3', '  4', '# poll 1 (2)', '  5', '  6', '# poll 2 (1)', '  7', '8']);
  });

  it("leaves body tasks in place while the loop's task or their iteration is unknown", () => {
    expect(shape(taskRows([t('3', 'check', 0), t('9', 'check')], runLoops(graph)))).toEqual(['  3', '  9']);
    expect(shape(taskRows([t('1', 'poll', 0), t('3', 'check', 0)], runLoops(null)))).toEqual(['1', '3']);
  });

  it("shows a loop's last 3 iterations, one row standing in for the earlier ones until the loop is expanded", () => {
    const rounds = [0, 1, 2, 3, 4].flatMap((i) => [t(`c${i}`, 'check', i), t(`w${i}`, 'wait_a_bit', i)]);
    const rows = taskRows([t('1', 'start'), t('2', 'poll', 4), ...rounds, t('9', 'report')], runLoops(graph));
    expect(shape(recentIterations(rows, new Set()))).toEqual([
      '1',
      '2',
      '… poll 2 (4)',
      '# poll 2 (2)',
      '  c2',
      '  w2',
      '# poll 3 (2)',
      '  c3',
      '  w3',
      '# poll 4 (2)',
      '  c4',
      '  w4',
      '9',
    ]);
    expect(shape(recentIterations(rows, new Set(['poll'])))).toEqual(shape(rows));
  });
});
