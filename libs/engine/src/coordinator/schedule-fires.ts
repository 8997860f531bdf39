import {
  claimDueSchedules,
  ScheduleBackfillRepository,
  ScheduleRepository,
  withSavepoint,
  type ScheduleRow,
  type ScheduleSkips,
  type Transaction,
} from '@weft/persistence';
import {
  decideFire,
  nextFireTime,
  planClockFires,
  RunStatus,
  SCHEDULE_INPUT_KEY,
  scheduleRunKey,
  SkipReason,
  WeftError,
  type CheckedTiming,
  type JsonValue,
  type OverlapPolicy,
} from '../index.js';
import type { AfterCommit } from './after-commit.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { RunOutcome } from './event-outcome.js';
import { message, userError } from './error-mapping.js';
import type { RunStarts } from './run-starts.js';

/** Where a fire came from: the schedule's clock, its buffer, a backfill, or a user's trigger. */
export type FireSource = 'clock' | 'buffer' | 'backfill' | 'trigger';

/** What became of one nominal time. */
export interface FireOutcome {
  nominalTime: Date;
  source: FireSource;
  outcome: 'started' | 'buffered' | 'skipped';
  /** The run started (or, for `already_fired`, the run that exists). */
  runId?: string;
  reason?: SkipReason;
  /** Runs cancelled first (`cancel_other`). */
  cancelled?: string[];
}

/** Most backfill times one pass handles; a longer backfill goes on at the next poll. */
export const BACKFILL_STEP = 100;

/** A schedule row's timing, as the pure fire-time functions read it. */
export function timingOf(row: Pick<ScheduleRow, 'cron' | 'intervalSeconds' | 'timeZone' | 'startAt' | 'endAt' | 'createdAt'>): CheckedTiming {
  return { cron: row.cron, intervalSeconds: row.intervalSeconds, timeZone: row.timeZone, startAt: row.startAt, endAt: row.endAt, anchor: row.createdAt };
}

const noSkips = (): ScheduleSkips => ({ overlap: 0, missed: 0, bufferFull: 0, startFailed: 0, alreadyFired: 0 });
const SKIP_FIELD: Record<SkipReason, keyof ScheduleSkips> = {
  overlap: 'overlap',
  missed: 'missed',
  buffer_full: 'bufferFull',
  start_failed: 'startFailed',
  already_fired: 'alreadyFired',
};

/** One schedule's pass inside its transaction: what it fired, and what to do after commit. */
class Pass {
  readonly outcomes: FireOutcome[] = [];
  /** The events the pass applied, for after-commit work. */
  readonly applied: RunOutcome[] = [];
  readonly skips = noSkips();
  fired = 0;
  lastNominal: Date | null = null;
  lastRunId: string | null = null;
  lastError: string | null | undefined = undefined;

  constructor(
    readonly row: ScheduleRow,
    readonly now: Date,
    /** Active (RUNNING or QUEUED) runs of the schedule, oldest first, kept up to date as the pass starts and cancels. */
    public active: string[],
    public buffered: Date[],
  ) {}

  skip(nominalTime: Date, source: FireSource, reason: SkipReason, runId?: string): void {
    this.skips[SKIP_FIELD[reason]]++;
    this.outcomes.push({ nominalTime, source, outcome: 'skipped', reason, ...(runId ? { runId } : {}) });
  }
}

/**
 * The scheduler's schedules: each claimed schedule is handled in ONE tenant transaction that
 * locks its row, starts the runs its due nominal times ask for (through the same RunStarted as
 * `startRun`, with the idempotency key `schedule:<id>:<nominal time>`) and stores its next fire
 * time, buffer and counters — so a fire and its schedule's advance commit together or not at all.
 * A crash before COMMIT leaves the schedule where it was, and the next claim fires the same
 * nominal times again; a run that exists for a nominal time (two replicas, a backfill over fired
 * times) is found by its key and never started twice.
 *
 * In one pass, in order: a buffered fire starts once the schedule has no active run (RUNNING, or
 * QUEUED for a slot of its concurrency key); the oldest
 * unfinished backfill goes on (up to {@link BACKFILL_STEP} times); then the clock's due times
 * fire, except those older than the catch-up window (never narrower than the scheduler's grace),
 * which are counted as missed. Each fire
 * follows the overlap policy ({@link decideFire}). A run that cannot start (its workflow or
 * version gone or deprecated) is skipped as `start_failed` with the reason kept in `last_error`,
 * and the schedule moves on.
 */
export class ScheduleFires {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly starts: RunStarts,
    private readonly after: AfterCommit,
  ) {}

  /** The most bytes of JSON a run's input or config may have (a schedule's are checked against it when saved). */
  get maxInputBytes(): number {
    return this.ctx.maxInputBytes;
  }

  /**
   * Claims up to `limit` schedules with work (by the database's clock, or the test clock) and
   * handles each in its tenant's transaction; returns how many it handled. A schedule whose pass
   * fails is logged and claimed again when its claim lease ends.
   */
  async fireDue(limit: number): Promise<number> {
    const { ctx } = this;
    const claimed = await claimDueSchedules(ctx.ds, ctx.testNow(), limit, ctx.timerLeaseMs);
    let handled = 0;
    for (const c of claimed) {
      try {
        await this.pass(c.tenantId, c.scheduleId, 'poll');
        handled++;
      } catch (err) {
        ctx.log.error(`schedule ${c.scheduleId} not fired: ${message(err)}`);
      }
    }
    return handled;
  }

  /**
   * Fires schedule `scheduleId` now (nominal time: the transaction's now, to the millisecond),
   * under its overlap policy, whether or not it is paused; its clock is not moved.
   * @throws WeftError NOT_FOUND (no such schedule of the tenant), TRANSIENT.
   */
  async trigger(tenantId: string, scheduleId: string): Promise<FireOutcome> {
    const out = await this.pass(tenantId, scheduleId, 'trigger');
    if (!out) throw new WeftError('NOT_FOUND', `schedule ${scheduleId} not found`);
    return out.outcomes[out.outcomes.length - 1]!;
  }

  /** One pass over one schedule in its tenant transaction, then what follows the commit. Undefined when there is no such schedule. */
  private async pass(tenantId: string, scheduleId: string, why: 'poll' | 'trigger'): Promise<Pass | undefined> {
    const { ctx } = this;
    const pass = await ctx.inTenant('schedule fire', tenantId, async (m) => {
      const schedules = new ScheduleRepository(m);
      const row = await schedules.find(tenantId, scheduleId, true);
      if (!row) return undefined;
      const now = await ctx.clock(m, tenantId);
      const p = new Pass(row, now, await schedules.activeRuns(tenantId, scheduleId), [...row.bufferedTimes]);
      if (why === 'trigger') {
        await this.fire(m, p, new Date(now.getTime()), 'trigger');
        await schedules.saveFireState(tenantId, scheduleId, this.state(p, row.nextFireAt, row.nextDueAt));
        return p;
      }
      if (row.paused) {
        await schedules.saveFireState(tenantId, scheduleId, this.state(p, row.nextFireAt, row.nextDueAt));
        return p;
      }
      await this.drainBuffer(m, p);
      await this.backfill(m, p);
      const plan = planClockFires(timingOf(row), row.id, row.nextFireAt, now, row.catchUpSeconds, row.jitterSeconds, ctx.scheduleGraceMs);
      p.skips.missed += plan.missed;
      for (const nominal of plan.due) await this.fire(m, p, nominal, 'clock');
      await schedules.saveFireState(tenantId, scheduleId, this.state(p, plan.next, plan.nextDue));
      return p;
    });
    if (!pass) return undefined;
    for (const a of pass.applied) await this.after.run(tenantId, a.runId, a.outcome);
    this.tell(tenantId, pass);
    return pass;
  }

  /** Buffered fires, oldest first, while the schedule has no active run (a run that ends at once lets the next one start). */
  private async drainBuffer(m: Transaction, p: Pass): Promise<void> {
    while (p.buffered.length > 0 && p.active.length === 0) await this.start(m, p, p.buffered.shift()!, 'buffer');
  }

  /**
   * The oldest unfinished backfill of the schedule, from its next nominal time: each time follows
   * the overlap policy, except that a policy that buffers waits instead (the backfill stops at that
   * time until the active run ends), so every time of the range starts in order.
   */
  private async backfill(m: Transaction, p: Pass): Promise<void> {
    const repo = new ScheduleBackfillRepository(m);
    const [b] = await repo.open(p.row.tenantId, p.row.id);
    if (!b) return;
    const timing: CheckedTiming = { ...timingOf(p.row), startAt: null, endAt: null, anchor: p.row.startAt ?? p.row.createdAt };
    let next = b.nextNominal;
    let started = 0;
    let skipped = 0;
    for (let n = 0; next && n < BACKFILL_STEP; n++) {
      const d = decideFire(p.row.overlapPolicy as OverlapPolicy, p.active.length > 0, 0);
      if (d.kind === 'buffer') break;
      const before = p.outcomes.length;
      await this.fire(m, p, next, 'backfill');
      if (p.outcomes.slice(before).some((o) => o.outcome === 'started')) started++;
      else skipped++;
      const after = nextFireTime(timing, next);
      next = after && after.getTime() <= b.toTime.getTime() ? after : null;
    }
    await repo.advance(p.row.tenantId, b.id, { started, skipped, nextNominal: next, now: p.now });
  }

  /** One nominal time under the schedule's overlap policy. */
  private async fire(m: Transaction, p: Pass, nominal: Date, source: FireSource): Promise<void> {
    const policy = p.row.overlapPolicy as OverlapPolicy;
    const d = decideFire(policy, p.active.length > 0, source === 'backfill' ? 0 : p.buffered.length);
    if (d.kind === 'skip') return p.skip(nominal, source, d.reason);
    if (d.kind === 'buffer') {
      p.buffered.push(nominal);
      p.outcomes.push({ nominalTime: nominal, source, outcome: 'buffered' });
      return;
    }
    const cancelled: string[] = [];
    if (d.kind === 'cancel_then_start') {
      for (const runId of p.active) {
        const outcome = await this.starts.cancelIn(
          m,
          p.row.tenantId,
          runId,
          `schedule ${p.row.id} fired for ${nominal.toISOString()} (overlap policy cancel_other)`,
          p.now,
        );
        if (outcome) {
          p.applied.push({ runId, outcome });
          cancelled.push(runId);
        }
      }
      p.active = [];
    }
    await this.start(m, p, nominal, source, cancelled);
  }

  /** Starts the run of `nominal` in a savepoint: a run that cannot start is skipped, the others stay. */
  private async start(m: Transaction, p: Pass, nominal: Date, source: FireSource, cancelled: string[] = []): Promise<void> {
    const { row } = p;
    const input = { ...(row.input as Record<string, JsonValue>), [SCHEDULE_INPUT_KEY]: { id: row.id, nominalTime: nominal.toISOString() } };
    try {
      const s = await withSavepoint(m, () =>
        this.starts.startIn(
          m,
          row.tenantId,
          {
            workflowId: row.workflowId,
            ...(row.version === null ? {} : { version: row.version }),
            input,
            config: row.config as JsonValue,
            idempotencyKey: scheduleRunKey(row.id, nominal),
            labels: row.labels ?? {},
          },
          { scheduleId: row.id, nominalTime: nominal },
        ),
      );
      if (!s.created) return p.skip(nominal, source, SkipReason.AlreadyFired, s.runId);
      p.applied.push({ runId: s.runId, outcome: s.outcome });
      if (s.outcome.status === RunStatus.Running || s.outcome.status === RunStatus.Queued) p.active.push(s.runId);
      p.fired++;
      p.lastNominal = nominal;
      p.lastRunId = s.runId;
      p.lastError = null;
      p.outcomes.push({ nominalTime: nominal, source, outcome: 'started', runId: s.runId, ...(cancelled.length ? { cancelled } : {}) });
    } catch (caught) {
      const err = userError(caught, 'the run');
      if (!(err instanceof WeftError) || err.code === 'TRANSIENT') throw caught;
      p.lastError = `the run for ${nominal.toISOString()} could not start: ${message(err)}`;
      p.skip(nominal, source, SkipReason.StartFailed);
    }
  }

  private state(p: Pass, nextFireAt: Date | null, nextDueAt: Date | null) {
    return {
      nextFireAt,
      nextDueAt,
      bufferedTimes: p.buffered,
      fired: p.fired,
      skipped: p.skips,
      lastNominalTime: p.lastNominal,
      lastFiredAt: p.fired > 0 ? p.now : null,
      lastRunId: p.lastRunId,
      ...(p.lastError === undefined ? {} : { lastError: p.lastError }),
      now: p.now,
    };
  }

  /** Tells the observer each fire (with its lag behind the nominal time) and each skip. */
  private tell(tenantId: string, p: Pass): void {
    const scheduleId = p.row.id;
    for (const o of p.outcomes) {
      if (o.outcome === 'started') {
        const lagMs = Math.max(0, p.now.getTime() - o.nominalTime.getTime());
        this.ctx.observe((obs) => obs.scheduleFired({ tenantId, scheduleId, runId: o.runId!, source: o.source, nominalTime: o.nominalTime, lagMs }));
      } else if (o.outcome === 'skipped') {
        this.ctx.observe((obs) => obs.scheduleSkipped({ tenantId, scheduleId, reason: o.reason!, count: 1 }));
      }
    }
    if (p.skips.missed > 0) this.ctx.observe((obs) => obs.scheduleSkipped({ tenantId, scheduleId, reason: SkipReason.Missed, count: p.skips.missed }));
  }
}
