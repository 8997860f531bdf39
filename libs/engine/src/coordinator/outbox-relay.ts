import type { AfterCommit } from './after-commit.js';
import type { BacklogDispatch } from './backlog-dispatch.js';
import type { RunSlots } from './run-slots.js';

/**
 * The scheduler's pass over every queue's backlog (the outbox): fair dispatch of what is ready,
 * whoever committed it. The committing process asks for a pass itself after its commit; this
 * poll covers a process that died before it could, a request lost with its process, a hold whose
 * time came while no process had a timer for it, and rate-limit starts no window counts any more.
 * It also starts the QUEUED runs of concurrency groups with a free slot whose promotion was left
 * for later.
 */
export class OutboxRelay {
  constructor(
    private readonly backlog: BacklogDispatch,
    private readonly slots: RunSlots,
    private readonly after: AfterCommit,
  ) {}

  /**
   * One pass over each queue with a ready backlog row or a hold that is over
   * ({@link BacklogDispatch.poll}); resolves how many attempts it admitted, at most `limit` per
   * queue and pass.
   */
  async relay(limit: number): Promise<number> {
    await this.slots.promoteStalled((tenantId, runId, applied) => this.after.run(tenantId, runId, applied));
    return this.backlog.poll(limit);
  }
}
