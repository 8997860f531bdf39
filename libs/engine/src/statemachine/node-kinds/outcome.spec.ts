import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../../model/workflow-types.js';
import { actionsOf, edge, forEach, Harness, subworkflow, task, types, wait, waitFor } from '../testing/harness.js';
import { activateForEach, settleIteration } from './for-each.js';
import { activateSubworkflow, settleChildTimer } from './subworkflow.js';
import { activateWaitForEvent, deliverSignal, timeOutWaitForEvent } from './wait-for-event.js';
import { activateWait, wakeWait } from './wait.js';

/**
 * Node kinds report what became of a node as data and leave the next step to routing: each call
 * below emits only the actions recording the node itself, never a successor's, although every
 * node here has a successor `next`.
 */
const next = task('next');

describe('a node kind returns its outcome and does not route', () => {
  it('WAIT: completed when already due, pending when parked, failed for a bad spec; its timer completes it', async () => {
    const due = new Harness([wait('w', { duration_seconds: 0 }), next], [edge('w', 'next')]);
    const s1 = due.step();
    expect(await activateWait(s1, due.dag.getNode('w')!)).toEqual({ kind: 'completed', output: { woke_at: '2030-01-01T00:00:00.000Z' } });
    expect(types(s1.tr)).toEqual(['CreateTask']);

    const later = new Harness([wait('w', { duration_seconds: 60 }), next], [edge('w', 'next')]);
    const s2 = later.step();
    expect(await activateWait(s2, later.dag.getNode('w')!)).toEqual({ kind: 'pending' });
    expect(actionsOf(s2.tr, 'CreateTask')).toEqual([expect.objectContaining({ status: TaskStatus.Waiting })]);

    const bad = new Harness([wait('w', { duration_seconds: 'soon' }), next], [edge('w', 'next')]);
    const s3 = bad.step();
    const reason = 'duration_seconds: must be a non-negative number, got "soon"';
    expect(await activateWait(s3, bad.dag.getNode('w')!)).toEqual({ kind: 'failed', reason });
    expect(actionsOf(s3.tr, 'CreateTask')).toEqual([expect.objectContaining({ status: TaskStatus.Failed, error: reason })]);

    const parked = new Harness([wait('w', { duration_seconds: 60 }), next], [edge('w', 'next')]);
    await parked.start();
    parked.advance(60);
    const s4 = parked.step();
    expect(wakeWait(s4, { type: 'TimerFired', taskId: parked.node('w').taskId, nodeId: 'w' })).toEqual({
      kind: 'completed',
      output: { woke_at: '2030-01-01T00:01:00.000Z' },
    });
    expect(types(s4.tr)).toEqual(['ResolveWait']);
  });

  it('WAIT_FOR_EVENT: pending while waiting, completed by a signal, failed by its timeout', async () => {
    const nodes = [waitFor('e', { event: 'go', timeout_seconds: 10 }), next];
    const fresh = new Harness(nodes, [edge('e', 'next')]);
    expect(await activateWaitForEvent(fresh.step(), fresh.dag.getNode('e')!)).toEqual({ kind: 'pending' });

    const signalled = new Harness(nodes, [edge('e', 'next')]);
    await signalled.start();
    const s1 = signalled.step();
    expect(deliverSignal(s1, { type: 'SignalReceived', name: 'go', payload: { ok: true } })).toEqual({
      nodeId: 'e',
      outcome: { kind: 'completed', output: { ok: true } },
    });
    expect(types(s1.tr)).toEqual(['ResolveWait']);

    const timedOut = new Harness(nodes, [edge('e', 'next')]);
    await timedOut.start();
    const s2 = timedOut.step();
    const ev = { type: 'TimerFired', taskId: timedOut.node('e').taskId, nodeId: 'e' } as const;
    expect(timeOutWaitForEvent(s2, ev, timedOut.node('e'))).toEqual({ kind: 'failed', reason: 'timed out waiting for event "go"' });
    expect(types(s2.tr)).toEqual(['ResolveWait']);
  });

  it('for_each: completed at once over an empty array, pending while iterations run, completed once they all did', async () => {
    const empty = new Harness([forEach('f', '{{ input.items }}'), next], [edge('f', 'next')], { input: { items: [] } });
    const s1 = empty.step();
    expect(await activateForEach(s1, empty.dag.getNode('f')!)).toEqual({ kind: 'completed', output: [] });
    expect(types(s1.tr)).toEqual(['CreateTask']);

    const h = new Harness([forEach('f', '{{ input.items }}'), next], [edge('f', 'next')], { input: { items: [1, 2] } });
    await h.start();
    await h.completeIteration('f', 0, { n: 1 });
    expect(await settleIteration(h.step(), 'f')).toEqual({ kind: 'pending' });
    await h.completeIteration('f', 1, { n: 2 });
    expect(h.node('f').status).toBe(TaskStatus.Completed);
    expect(h.node('next').status).toBe(TaskStatus.Pending); // routing, not the node kind, reached it
  });

  it('SUBWORKFLOW: pending once started, ignored while the child runs, completed with its output', async () => {
    const fresh = new Harness([subworkflow('c', { workflow: 'child' }), next], [edge('c', 'next')]);
    const s1 = fresh.step();
    expect(await activateSubworkflow(s1, fresh.dag.getNode('c')!)).toEqual({ kind: 'pending' });
    expect(types(s1.tr)).toEqual(['CreateTask', 'StartChildRun']);

    const h = new Harness([subworkflow('c', { workflow: 'child' }), next], [edge('c', 'next')]);
    await h.start();
    const child = h.children[0]!;
    const ev = { type: 'TimerFired', taskId: h.node('c').taskId, nodeId: 'c' } as const;
    expect(await settleChildTimer(h.step(), ev, h.node('c'), h.dag.getNode('c')!)).toEqual({
      kind: 'ignored',
      reason: `child run ${child.id} of c is still running`,
    });

    child.status = RunStatus.Succeeded;
    child.output = { paid: true };
    const s2 = h.step();
    expect(await settleChildTimer(s2, ev, h.node('c'), h.dag.getNode('c')!)).toEqual({ kind: 'completed', output: { paid: true } });
    expect(types(s2.tr)).toEqual(['ResolveWait']);
  });
});
