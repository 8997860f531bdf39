/** What a {@link MemoryBudget} holds, after a change. */
export interface MemoryBudgetState {
  /** The budget, MiB. */
  totalMb: number;
  /** MiB reserved by the executions that run. */
  reservedMb: number;
  /** Executions waiting for their reservation. */
  waiting: number;
}

/** A reservation was refused because the wait was aborted (cancel, lost lease, timeout, drain). */
export class ReservationAborted extends Error {
  constructor() {
    super('the wait for memory was aborted');
    this.name = 'ReservationAborted';
  }
}

interface Waiter {
  mb: number;
  hooks: ReservationHooks;
  grant: (release: () => void) => void;
}

/** Told, synchronously, of one reservation's changes, in the order they happen. */
export interface ReservationHooks {
  /** It does not fit now: it waits. */
  waiting?(): void;
  /** Its wait was aborted: it left the queue without memory (told before any waiter behind it is granted). */
  abandoned?(): void;
  /** It was granted. */
  reserved?(): void;
  /** It was released (told before any waiter it makes room for is granted). */
  released?(): void;
}

/**
 * The memory all of a worker's CODE executions may reserve together, handed out first come,
 * first served: a reservation that does not fit in what is left waits, and every reservation
 * after it waits behind it even when it would fit, so a stream of small executions cannot starve
 * a large one (the price: a small one may wait behind a large one that waits). An aborted wait
 * leaves the queue at once, and the ones behind it go ahead when they now fit.
 */
export class MemoryBudget {
  private reserved = 0;
  private readonly queue: Waiter[] = [];

  /**
   * @param totalMb the budget, MiB
   * @param changed called after every change (reservation, release, a wait begun or ended)
   */
  constructor(
    readonly totalMb: number,
    private readonly changed: (state: MemoryBudgetState) => void = () => undefined,
  ) {}

  /** The current state. */
  get state(): MemoryBudgetState {
    return { totalMb: this.totalMb, reservedMb: this.reserved, waiting: this.queue.length };
  }

  /**
   * Reserves `mb` MiB: at once when nothing waits and it fits, otherwise after every earlier
   * waiter, when it fits. Resolves to the function that releases it (idempotent).
   *
   * @param hooks told when it waits, is granted and is released
   * @throws RangeError when `mb` exceeds the whole budget (it could never fit)
   * @throws ReservationAborted when `signal` aborts before the reservation is granted
   */
  reserve(mb: number, signal?: AbortSignal, hooks: ReservationHooks = {}): Promise<() => void> {
    if (mb > this.totalMb) return Promise.reject(new RangeError(`${mb} MiB exceeds the budget of ${this.totalMb} MiB`));
    if (signal?.aborted) return Promise.reject(new ReservationAborted());
    if (this.queue.length === 0 && this.reserved + mb <= this.totalMb) return Promise.resolve(this.take(mb, hooks));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.queue.indexOf(waiter);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(new ReservationAborted());
        hooks.abandoned?.();
        this.grantWaiting();
        this.changed(this.state);
      };
      const waiter: Waiter = {
        mb,
        hooks,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      this.queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      hooks.waiting?.();
      this.changed(this.state);
    });
  }

  private take(mb: number, hooks: ReservationHooks): () => void {
    this.reserved += mb;
    hooks.reserved?.();
    this.changed(this.state);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= mb;
      hooks.released?.();
      this.grantWaiting();
      this.changed(this.state);
    };
  }

  /** Grants the waiters at the head of the queue, in order, while each fits. */
  private grantWaiting(): void {
    while (this.queue.length > 0 && this.reserved + this.queue[0].mb <= this.totalMb) {
      const next = this.queue.shift()!;
      next.grant(this.take(next.mb, next.hooks));
    }
  }
}
