import type { Applied, FireTimerInput } from './applied.js';
import type { BacklogDispatch } from './backlog-dispatch.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { isRunTerminal } from '../index.js';
import { message } from './error-mapping.js';

/**
 * What follows a committed event, outside any transaction: tell the observer a run started or
 * finished; ask fair dispatch for a pass over the queues its attempts joined (it enqueues what it
 * admits; the scheduler's poll covers a lost request), publish the run update (one that does not
 * end the run only when someone watches it, then with what the event changed),
 * the same for the runs it changed in its transaction, and fire the parents' SUBWORKFLOW tasks
 * it woke (the fast path; the scheduler fires them when it fails).
 */
export class AfterCommit {
  /** `fireTimer` applies a TimerFired, as the run commands do. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly backlog: BacklogDispatch,
    private readonly fireTimer: (tenantId: string, t: FireTimerInput) => Promise<unknown>,
  ) {}

  /** Runs after the commit of `applied`, an event of run `runId`; never throws for a lost enqueue or publish. */
  async run(tenantId: string, runId: string, applied: Applied): Promise<void> {
    const { ctx } = this;
    const { started, finished } = applied;
    if (started) ctx.observe((o) => o.runStarted({ tenantId, runId, ...started }));
    if (finished) ctx.observe((o) => o.runFinished({ tenantId, runId, ...finished }));
    if (applied.jobs.length) await this.backlog.offer(applied.jobs);
    if (applied.slotFreedOn) await this.backlog.request(applied.slotFreedOn);
    try {
      // An update that does not end its run goes out only to a watched run, with what changed;
      // not when the event queued attempts: fair dispatch (above) may have admitted them since.
      const watched = ctx.publisher.watching?.(tenantId, runId) ?? true;
      if (watched || isRunTerminal(applied.status)) {
        const carried = watched && applied.jobs.length === 0 && (ctx.publisher.watchingRun?.(tenantId, runId) ?? true);
        const change = carried ? applied.change?.() : undefined;
        await ctx.publisher.publish({ tenantId, runId, status: applied.status, seq: applied.seq, ...(change ? { change } : {}) });
      }
    } catch (err) {
      ctx.log.warn(`run ${runId}: update not published: ${message(err)}`);
    }
    for (const n of applied.nested ?? []) await this.run(tenantId, n.runId, n.applied);
    for (const w of applied.wakes ?? []) {
      await this.fireTimer(tenantId, w).catch((err: unknown) =>
        ctx.log.warn(`run ${w.runId}: the end of a child run was not applied at once (the scheduler fires it): ${message(err)}`),
      );
    }
  }
}
