import { describe, expect, it } from '@jest/globals';
import type { TaskJob } from '@weft/engine';
import { InProcessTaskQueues } from './in-process-task-queues.js';

const NOW = new Date('2026-01-01T00:00:00Z');

function job(taskId: string, opts: Partial<TaskJob> = {}): TaskJob {
  return { tenantId: 't', runId: 'r', taskId, nodeId: taskId, nodeType: 'HTTP', attempt: 0, queue: 'http', input: {}, notBefore: NOW.getTime(), ...opts };
}

/** Resolves once `check` holds, polling on later turns of the event loop (no clock involved). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

/** A consumer whose handlers wait until released; it records the task ids in the order it started them. */
function gatedConsumer(q: InProcessTaskQueues, concurrency: number, result: (j: TaskJob) => unknown = () => undefined) {
  const started: string[] = [];
  const release = new Map<string, () => void>();
  q.consume(['http'], concurrency, async (j) => {
    started.push(j.taskId);
    await new Promise<void>((r) => release.set(j.taskId, r));
    return result(j) as undefined;
  });
  return { started, release: (id: string) => release.get(id)!() };
}

describe('InProcessTaskQueues', () => {
  it('enqueues an attempt once while it is held, and again once it was handled', async () => {
    const q = new InProcessTaskQueues();
    await q.enqueue([job('a'), job('a')], NOW);
    const c = gatedConsumer(q, 4);
    await until(() => c.started.length === 1);
    await q.enqueue([job('a')], NOW);
    expect(await q.hasJob('http', 'a:0')).toBe(true);
    c.release('a');
    await until(() => q.counts().http!.active === 0);
    expect(await q.hasJob('http', 'a:0')).toBe(false);
    await q.enqueue([job('a')], NOW);
    await until(() => c.started.length === 2);
    expect(c.started).toEqual(['a', 'a']);
    await q.close();
  });

  it('runs at most `concurrency` handlers, never inside the enqueue call, and `ahead` jobs first', async () => {
    const q = new InProcessTaskQueues();
    const c = gatedConsumer(q, 1);
    await q.enqueue([job('first')], NOW);
    expect(c.started).toEqual([]);
    await until(() => c.started.length === 1);
    await q.enqueue([job('b1'), job('b2')], NOW);
    await q.enqueue([job('x1'), job('x2')], NOW, { ahead: true });
    for (const id of ['first', 'x1', 'x2', 'b1']) {
      c.release(id);
      await until(() => c.started.includes(id) && c.started.length === ['first', 'x1', 'x2', 'b1', 'b2'].indexOf(id) + 2);
    }
    expect(c.started).toEqual(['first', 'x1', 'x2', 'b1', 'b2']);
    c.release('b2');
    await q.stopConsuming();
    await q.close();
  });

  it('holds a delayed job until it is due, and a probe of a due attempt makes it due now', async () => {
    const q = new InProcessTaskQueues();
    const c = gatedConsumer(q, 2);
    await q.enqueue([job('later', { notBefore: NOW.getTime() + 3_600_000 })], NOW);
    expect(q.counts().http).toEqual({ waiting: 0, delayed: 1, active: 0 });
    expect(await q.hasJob('http', 'later:0')).toBe(true);
    expect(q.counts().http!.delayed).toBe(1);
    expect(await q.hasJob('http', 'later:0', { due: true })).toBe(true);
    await until(() => c.started.length === 1);
    c.release('later');
    await q.stopConsuming();
    await q.close();
  });

  it('puts a handed-back job at the head of its queue once the delivered one is gone, and stopConsuming waits for it', async () => {
    const q = new InProcessTaskQueues();
    const c = gatedConsumer(q, 1, (j) => (j.taskId === 'a' && j.attempt === 0 ? { handBack: j } : undefined));
    await q.enqueue([job('a'), job('b')], NOW);
    await until(() => c.started.length === 1);
    await q.pauseConsuming();
    const stopped = q.stopConsuming();
    c.release('a');
    await stopped;
    // Paused: the handed-back job waits, first, under its own id.
    expect(q.counts().http).toEqual({ waiting: 2, delayed: 0, active: 0 });
    expect(await q.hasJob('http', 'a:0')).toBe(true);
    await q.close();
    expect(await q.hasJob('http', 'a:0')).toBe(false);
    await expect(q.ping()).rejects.toThrow(/closed/);
  });

  it('drops a job whose handler throws, reporting it, and goes on with the next', async () => {
    const errors: string[] = [];
    const q = new InProcessTaskQueues((m) => errors.push(m));
    const done: string[] = [];
    q.consume(['http'], 1, async (j) => {
      if (j.taskId === 'bad') throw new Error('boom');
      done.push(j.taskId);
    });
    await q.enqueue([job('bad'), job('good')], NOW);
    await until(() => done.length === 1);
    expect(errors).toEqual([expect.stringMatching(/job bad:0 failed: boom/)]);
    expect(await q.hasJob('http', 'bad:0')).toBe(false);
    await q.close();
  });
});
