import type { BacklogDispatch } from './backlog-dispatch.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { AppliedOutcome, DirectOutcome, EventOutcome } from './event-outcome.js';
import type { FireTimerInput } from './inputs.js';
import { assertNever, isRunTerminal } from '../index.js';
import { message } from './error-mapping.js';

/** Fires the timer of a WAITING task: applies its TimerFired, as the run commands do. */
export interface TimerFiring {
  /** Applies the TimerFired of `t` in tenant `tenantId`; resolves once it is committed and followed. */
  fireTimer(tenantId: string, t: FireTimerInput): Promise<unknown>;
}

/**
 * What follows a committed event, outside any transaction: tell the observer a run started or
 * finished; ask fair dispatch for a pass over the queues its attempts joined (it enqueues what it
 * admits; the scheduler's poll covers a lost request), publish the run update (one that does not
 * end the run only when someone watches it, then with what the event changed),
 * the same for the runs it changed in its transaction, and fire the parents' SUBWORKFLOW tasks
 * it woke (the fast path; the scheduler fires them when it fails).
 */
export class AfterCommit {
  /** `timers` fires the parents' SUBWORKFLOW tasks an event woke. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly backlog: BacklogDispatch,
    private readonly timers: TimerFiring,
  ) {}

  /** Runs after the commit of `outcome`, an event of run `runId`; never throws for a lost enqueue or publish. */
  async run(tenantId: string, runId: string, outcome: EventOutcome): Promise<void> {
    switch (outcome.kind) {
      case 'applied':
        this.tell(tenantId, runId, outcome);
        if (outcome.jobs.length) await this.backlog.offer(outcome.jobs);
        if (outcome.slotFreedOn) await this.backlog.request(outcome.slotFreedOn);
        for (const queue of outcome.released ?? []) await this.backlog.request(queue);
        await this.publish(tenantId, runId, outcome);
        return this.follow(tenantId, outcome);
      case 'direct':
        this.tell(tenantId, runId, outcome);
        await this.publish(tenantId, runId, outcome);
        return this.follow(tenantId, outcome);
      case 'rejected':
        if (outcome.slotFreedOn) await this.backlog.request(outcome.slotFreedOn);
        return this.publish(tenantId, runId, outcome);
      case 'ignored':
        return this.publish(tenantId, runId, outcome);
      default:
        return assertNever(outcome);
    }
  }

  /** Tells the observer the run started or finished, as `outcome` says. */
  private tell(tenantId: string, runId: string, outcome: AppliedOutcome | DirectOutcome): void {
    const { started, finished } = outcome;
    if (started) this.ctx.observe((o) => o.runStarted({ tenantId, runId, ...started }));
    if (finished) this.ctx.observe((o) => o.runFinished({ tenantId, runId, ...finished }));
    const paused = outcome.kind === 'applied' ? outcome.paused : undefined;
    if (paused) this.ctx.observe((o) => o.runPaused?.({ tenantId, runId, ...paused }));
  }

  /**
   * Publishes the run's update. One that does not end its run goes out only to a watched run,
   * with what changed when the outcome carries it; not when the event queued attempts: fair
   * dispatch (above) may have admitted them since.
   */
  private async publish(tenantId: string, runId: string, outcome: EventOutcome): Promise<void> {
    const { ctx } = this;
    try {
      const watched = ctx.publisher.watching?.(tenantId, runId) ?? true;
      if (watched || isRunTerminal(outcome.status)) {
        const queued = outcome.kind === 'applied' && outcome.jobs.length > 0;
        const carried = watched && !queued && (ctx.publisher.watchingRun?.(tenantId, runId) ?? true);
        const change = carried && outcome.kind === 'applied' ? outcome.change() : undefined;
        await ctx.publisher.publish({ tenantId, runId, status: outcome.status, seq: outcome.seq, ...(change ? { change } : {}) });
      }
    } catch (err) {
      ctx.log.warn(`run ${runId}: update not published: ${message(err)}`);
    }
  }

  /** The runs `outcome` changed in its transaction, then the parents it woke. */
  private async follow(tenantId: string, outcome: AppliedOutcome | DirectOutcome): Promise<void> {
    for (const n of outcome.nested) await this.run(tenantId, n.runId, n.outcome);
    for (const w of outcome.wakes) {
      await this.timers
        .fireTimer(tenantId, w)
        .catch((err: unknown) => this.ctx.log.warn(`run ${w.runId}: the end of a child run was not applied at once (the scheduler fires it): ${message(err)}`));
    }
  }
}
