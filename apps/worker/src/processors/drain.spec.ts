import { describe, expect, it } from '@jest/globals';
import { Drain } from './drain.js';

/** A job the test settles by hand. */
function job() {
  let settle!: () => void;
  const done = new Promise<void>((r) => (settle = r));
  return { done, settle };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a drain', () => {
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
    const outcome = await run;
    expect(outcome).toEqual({ inFlight: 2, handedBack: 0, tookMs: expect.any(Number) });
    expect(outcome.tookMs).toBeGreaterThanOrEqual(55);
    expect(outcome.tookMs).toBeLessThan(900);
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
    const outcome = await drain.run(async () => {
      calledAt = Date.now() - started;
      setTimeout(slow.settle, 30); // the aborted execution settles soon after
      return 1;
    });
    expect(calledAt).toBeGreaterThanOrEqual(95);
    expect(calledAt).toBeLessThan(600);
    expect(outcome).toMatchObject({ inFlight: 2, handedBack: 1 });
    expect(outcome.tookMs).toBeLessThan(900); // well within the grace
  });

  it('gives up after the grace on a job that never settles', async () => {
    const drain = new Drain(20, 80);
    drain.track(new Promise<void>(() => undefined));
    const outcome = await drain.run(async () => 1);
    expect(outcome.handedBack).toBe(1);
    expect(outcome.tookMs).toBeGreaterThanOrEqual(95);
    expect(outcome.tookMs).toBeLessThan(1_000);
  });

  it('waits for jobs tracked after it began (a report still under way when it started)', async () => {
    const drain = new Drain(1_000);
    const first = job();
    const later = job();
    drain.track(first.done);
    const run = drain.run(async () => 0);
    await sleep(10);
    drain.track(later.done);
    first.settle();
    await sleep(30);
    let finished = false;
    void run.then(() => (finished = true));
    await sleep(10);
    expect(finished).toBe(false);
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
