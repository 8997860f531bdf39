import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Drain } from './drain.js';

/** A job the test settles by hand. */
function job() {
  let settle!: () => void;
  const done = new Promise<void>((r) => (settle = r));
  return { done, settle };
}

/** Whether `p` has settled, after the promise jobs queued so far ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await jest.advanceTimersByTimeAsync(0);
  return done;
}

describe('a drain', () => {
  // The drain's deadlines run on a fake clock: each time below is exact, whatever the machine's load.
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('is inactive until it runs, then active for good', async () => {
    const drain = new Drain(50);
    expect(drain.active).toBe(false);
    const run = drain.run(async () => 0);
    expect(drain.active).toBe(true);
    await run;
    expect(drain.active).toBe(true);
  });

  it('waits for the jobs in flight and hands nothing back when they finish before the deadline', async () => {
    const drain = new Drain(1_000);
    const a = job();
    const b = job();
    drain.track(a.done);
    drain.track(b.done);
    let handBacks = 0;
    const run = drain.run(async () => ++handBacks);
    setTimeout(a.settle, 20);
    setTimeout(b.settle, 60);
    await jest.advanceTimersByTimeAsync(59);
    expect(await settled(run)).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await run).toEqual({ inFlight: 2, handedBack: 0, tookMs: 60 });
    expect(handBacks).toBe(0);
    expect(drain.inFlight).toBe(0);
  });

  it('hands back at the deadline what is still in flight, then waits the grace for it to settle', async () => {
    const drain = new Drain(100, 1_000);
    const quick = job();
    const slow = job();
    drain.track(quick.done);
    drain.track(slow.done);
    setTimeout(quick.settle, 10);
    let calledAt = 0;
    const started = Date.now();
    const run = drain.run(async () => {
      calledAt = Date.now() - started;
      setTimeout(slow.settle, 30); // the aborted execution settles soon after
      return 1;
    });
    await jest.advanceTimersByTimeAsync(99);
    expect(calledAt).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(calledAt).toBe(100);
    await jest.advanceTimersByTimeAsync(30);
    expect(await run).toEqual({ inFlight: 2, handedBack: 1, tookMs: 130 }); // well within the grace
  });

  it('gives up after the grace on a job that never settles', async () => {
    const drain = new Drain(20, 80);
    drain.track(new Promise<void>(() => undefined));
    const run = drain.run(async () => 1);
    await jest.advanceTimersByTimeAsync(99);
    expect(await settled(run)).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await run).toEqual({ inFlight: 1, handedBack: 1, tookMs: 100 });
  });

  it('waits for jobs tracked after it began (a report still under way when it started)', async () => {
    const drain = new Drain(1_000);
    const first = job();
    const later = job();
    drain.track(first.done);
    const run = drain.run(async () => 0);
    await jest.advanceTimersByTimeAsync(10);
    drain.track(later.done);
    first.settle();
    await jest.advanceTimersByTimeAsync(40);
    expect(await settled(run)).toBe(false);
    later.settle();
    expect((await run).handedBack).toBe(0);
  });

  it('is one drain however often it is run', async () => {
    const drain = new Drain(10);
    const a = drain.run(async () => 0);
    const b = drain.run(async () => 5);
    expect(a).toBe(b);
  });
});
