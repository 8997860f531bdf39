import { pruneConcurrencyGroups, pruneRateStarts, stalledGroups, withTenant } from '@weft/persistence';
import type { AfterCommit } from './after-commit.js';
import type { BacklogDispatch } from './backlog-dispatch.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';
import type { LinkedWork } from './event-outcome.js';
import type { RunSlots } from './run-slots.js';

/** How often the poll deletes what no limit counts any more, ms. */
const UPKEEP_EVERY_MS = 60_000;
/** How long a rate-limit start is kept: no window is longer than a day. */
const RATE_START_KEPT_MS = 86_400_000;
/** How long a concurrency group's row outlives its last admission once no run holds or waits for a slot. */
const IDLE_GROUP_KEPT_MS = 86_400_000;
/** Idle concurrency groups deleted at most per upkeep. */
const GROUPS_PER_UPKEEP = 1000;

/**
 * The scheduler's pass over every queue's backlog (the outbox): fair dispatch of what is ready,
 * whoever committed it. The committing process asks for a pass itself after its commit; this
 * poll covers a process that died before it could, a request lost with its process, and a hold
 * whose time came while no process had a timer for it. It also starts the QUEUED runs of
 * concurrency groups with a free slot whose promotion was left for later, and once a minute
 * deletes what no limit counts any more ({@link upkeep}).
 */
export class OutboxRelay {
  private upkeptAt = -Infinity;

  constructor(
    private readonly ctx: CoordinatorContext,
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
    await this.promoteStalled();
    const admitted = await this.backlog.poll(limit);
    if (performance.now() - this.upkeptAt >= UPKEEP_EVERY_MS) {
      this.upkeptAt = performance.now();
      await this.upkeep();
    }
    return admitted;
  }

  /**
   * The safety net of run slots: every tenant's concurrency groups with QUEUED runs and a free
   * slot (an end whose promotion was left for later) get their promotion now
   * ({@link RunSlots.promote}), each in its own transaction, and each run started gets its
   * after-commit work. Resolves how many groups it looked at; a group that fails is logged and
   * tried again at the next poll.
   */
  private async promoteStalled(): Promise<number> {
    const { ctx } = this;
    const groups = await stalledGroups(ctx.ds);
    for (const g of groups) {
      try {
        const linked = await ctx.retrying('promote queued runs', () =>
          withTenant(ctx.ds, g.tenantId, async (m) => {
            const work: LinkedWork = { now: await ctx.clock(m, g.tenantId), nested: [], wakes: [] };
            await this.slots.promote(m, g.tenantId, g.groupKey, work, 0);
            return work;
          }),
        );
        for (const n of linked.nested) await this.after.run(g.tenantId, n.runId, n.outcome);
      } catch (err) {
        ctx.log.warn(`concurrency group ${g.groupKey} of tenant ${g.tenantId}: queued runs not started, retrying at the next poll: ${message(err)}`);
      }
    }
    return groups.length;
  }

  /**
   * Deletes the rate-limit starts older than any window (a day), and up to 1,000 concurrency
   * groups with no RUNNING or QUEUED run whose last admission is over a day old (by the test
   * clock when one is set, else this process's); resolves how many of each.
   */
  async upkeep(): Promise<{ rateStarts: number; groups: number }> {
    const { ctx } = this;
    const now = (ctx.testNow() ?? new Date()).getTime();
    const rateStarts = await pruneRateStarts(ctx.ds, new Date(now - RATE_START_KEPT_MS));
    const groups = await pruneConcurrencyGroups(ctx.ds, new Date(now - IDLE_GROUP_KEPT_MS), GROUPS_PER_UPKEEP);
    return { rateStarts, groups };
  }
}
