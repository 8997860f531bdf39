import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import { actionsOf, cond, created, dispatched, edge, finished, Harness, sw, task } from './testing/harness.js';

/** p → s ─(tasks.p.output.n > 10)→ big, ─(n < 0)→ neg, and the default edge s → other (with `dflt`). */
function story(dflt: boolean): Harness {
  const s = dflt ? { ...sw('s'), spec: { default: 'other' } } : sw('s');
  return new Harness(
    [task('p'), s, task('big'), task('neg'), task('other')],
    [edge('p', 's'), cond('s', 'big', '{{tasks.p.output.n > 10}}'), cond('s', 'neg', '{{tasks.p.output.n < 0}}'), ...(dflt ? [edge('s', 'other')] : [])],
  );
}

describe('a SWITCH default and the decision it records', () => {
  it('takes the default when no condition holds, and records the conditions evaluated', async () => {
    const h = story(true);
    await h.start();
    const tr = await h.complete('p', { n: 5 });
    expect(dispatched(tr)).toEqual(['other']);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['big', 'neg']);
    expect(h.node('s').branches).toEqual(['other']);
    expect(actionsOf(tr, 'CreateTask').find((a) => a.node.node_id === 's')?.decision).toEqual({
      branches: ['other'],
      default: 'other',
      defaultTaken: true,
      conditions: [
        { to: 'big', condition: '{{tasks.p.output.n > 10}}', value: false },
        { to: 'neg', condition: '{{tasks.p.output.n < 0}}', value: false },
      ],
    });
  });

  it('skips the default like any unselected branch when a condition holds', async () => {
    const h = story(true);
    await h.start();
    const tr = await h.complete('p', { n: 50 });
    expect(dispatched(tr)).toEqual(['big']);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['neg', 'other']);
    expect(h.node('s').branches).toEqual(['big']);
    const decision = actionsOf(tr, 'CreateTask').find((a) => a.node.node_id === 's')?.decision;
    expect(decision?.defaultTaken).toBe(false);
    expect(finished(await h.complete('big'))?.status).toBe(RunStatus.Succeeded);
  });

  it('without a default records an empty decision with the conditions evaluated, and skips every branch', async () => {
    const h = story(false);
    await h.start();
    const tr = await h.complete('p', { n: 5 });
    expect(dispatched(tr)).toEqual([]);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['big', 'neg']);
    expect(h.node('s').branches).toEqual([]);
    expect(actionsOf(tr, 'CreateTask').find((a) => a.node.node_id === 's')?.decision).toEqual({
      branches: [],
      default: null,
      defaultTaken: false,
      conditions: [
        { to: 'big', condition: '{{tasks.p.output.n > 10}}', value: false },
        { to: 'neg', condition: '{{tasks.p.output.n < 0}}', value: false },
      ],
    });
    expect(finished(tr)?.status).toBe(RunStatus.Succeeded);
  });

  it('evaluates the fallback of a decision never recorded with the default too', async () => {
    const h = new Harness(
      [task('p'), { ...sw('s'), spec: { default: 'other' } }, task('slow'), task('big'), task('other'), task('j')],
      [edge('p', 's'), edge('p', 'slow'), cond('s', 'big', '{{tasks.p.output.n > 10}}'), edge('s', 'other'), edge('other', 'j'), edge('slow', 'j')],
    );
    await h.start();
    await h.complete('p', { n: 1 });
    h.node('s').branches = undefined; // a SWITCH task stored without its decision
    expect(dispatched(await h.complete('other'))).toEqual([]);
    expect(dispatched(await h.complete('slow'))).toEqual(['j']);
  });
});
