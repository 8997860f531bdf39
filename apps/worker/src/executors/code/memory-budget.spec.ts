import { describe, expect, it } from '@jest/globals';
import { MemoryBudget, ReservationAborted, type MemoryBudgetState } from './memory-budget.js';

/** Lets every settled promise's callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('MemoryBudget', () => {
  it('makes a second 200 MB execution wait in a 256 MB budget until the first one releases', async () => {
    const events: string[] = [];
    const budget = new MemoryBudget(256);
    const releaseA = await budget.reserve(200);
    events.push('A reserved');
    const b = budget.reserve(200, undefined, { waiting: () => events.push('B waits'), reserved: () => events.push('B reserved') });
    await settle();
    expect(budget.state).toEqual({ totalMb: 256, reservedMb: 200, waiting: 1 });
    events.push('A released');
    releaseA();
    const releaseB = await b;
    expect(events).toEqual(['A reserved', 'B waits', 'A released', 'B reserved']);
    expect(budget.state).toEqual({ totalMb: 256, reservedMb: 200, waiting: 0 });
    releaseB();
    releaseB(); // a second release changes nothing
    expect(budget.state.reservedMb).toBe(0);
  });

  it('serves waiters first come, first served: small ones do not overtake a large one that waits', async () => {
    const budget = new MemoryBudget(1000);
    const granted: string[] = [];
    const running = await budget.reserve(600);
    const large = budget.reserve(900).then((release) => (granted.push('large'), release));
    // 300 would fit beside the 600 now, but waits behind the large one.
    const small = budget.reserve(300).then((release) => (granted.push('small'), release));
    await settle();
    expect(granted).toEqual([]);
    running();
    const releaseLarge = await large;
    await settle();
    expect(granted).toEqual(['large']);
    releaseLarge();
    (await small)();
    expect(granted).toEqual(['large', 'small']);
  });

  it('grants every waiter at the head that fits when memory is released', async () => {
    const budget = new MemoryBudget(300);
    const first = await budget.reserve(300);
    const waiters = [budget.reserve(100), budget.reserve(100), budget.reserve(100), budget.reserve(200)];
    first();
    await Promise.all(waiters.slice(0, 3));
    await settle();
    expect(budget.state).toEqual({ totalMb: 300, reservedMb: 300, waiting: 1 });
  });

  it('drops an aborted wait, and lets the ones behind it go ahead when they fit', async () => {
    const budget = new MemoryBudget(500);
    await budget.reserve(300);
    const cancel = new AbortController();
    const told: string[] = [];
    const at = (what: string) => () => told.push(`${what} ${budget.state.reservedMb}/${budget.state.waiting}`);
    const large = budget.reserve(400, cancel.signal, { waiting: at('large waits'), abandoned: at('large abandoned'), reserved: at('large reserved') });
    const small = budget.reserve(200, undefined, { waiting: at('small waits'), reserved: at('small reserved') });
    cancel.abort();
    await expect(large).rejects.toBeInstanceOf(ReservationAborted);
    await small;
    // Told with the state after each change: the aborted one out of the queue before the next is granted.
    expect(told).toEqual(['large waits 300/1', 'small waits 300/2', 'large abandoned 300/1', 'small reserved 500/0']);
    expect(budget.state).toEqual({ totalMb: 500, reservedMb: 500, waiting: 0 });
    await expect(budget.reserve(10, AbortSignal.abort())).rejects.toBeInstanceOf(ReservationAborted);
  });

  it('refuses a reservation larger than the whole budget at once', async () => {
    await expect(new MemoryBudget(256).reserve(300)).rejects.toBeInstanceOf(RangeError);
  });

  it('reports every change of reservations and waiters', async () => {
    const states: MemoryBudgetState[] = [];
    const budget = new MemoryBudget(100, (state) => states.push(state));
    const a = await budget.reserve(60);
    const b = budget.reserve(60);
    a();
    (await b)();
    expect(states.map((s) => [s.reservedMb, s.waiting])).toEqual([
      [60, 0],
      [60, 1],
      [60, 0], // b granted inside a's release
      [60, 0], // a's release reported
      [0, 0],
    ]);
  });
});
