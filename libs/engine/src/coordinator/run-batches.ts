import { randomUUID } from 'node:crypto';
import { claimRunBatches, RunBatchRepository, TooManyRuns, type BatchAction, type BatchOutcome, type RunBatchRow, type RunFilter } from '@weft/persistence';
import { MAX_ERROR_CHARS, WeftError } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';
import { checkName } from './input-checks.js';
import type { RunCommands } from './run-commands.js';

/** The most runs one bulk action may act on. */
export const MAX_BATCH_RUNS = 100_000;

/** The actions a bulk action may take. */
export const BATCH_ACTIONS: readonly BatchAction[] = ['CANCEL', 'RETRY', 'PAUSE', 'RESUME'];

/** A bulk action to create: see {@link RunBatches.create}. */
export interface CreateRunBatchInput {
  action: BatchAction;
  /** The runs to act on (the repository's filter), and the filter as given, kept with the batch. */
  filter: RunFilter;
  filterJson: Record<string, unknown>;
  /** RETRY only, required: the node each run is retried from. */
  fromNodeId?: string;
  /** Kept with each run's event (the pause reason of a PAUSE; a CANCEL's reason). */
  reason?: string;
  idempotencyKey?: string;
}

/**
 * Bulk actions over runs: cancel, retry, pause or resume every run a filter matched when the
 * action was created, each run once, at most `batchRunsPerSecond` runs a second across the
 * scheduler's passes. A batch's progress lives in the database (its items' outcomes and its
 * lease), so it goes on after any process restarts: an item acted on whose outcome was not
 * recorded yet is found by its event in the run's history (which carries the batch id) and is
 * not acted on twice.
 */
export class RunBatches {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly runs: RunCommands,
  ) {}

  /**
   * Creates a bulk action over the runs `input.filter` matches now (oldest first), or returns the
   * tenant's batch with the same idempotency key (`created` false).
   * @throws WeftError BAD_USER_INPUT for an unknown action, an empty filter, a RETRY without
   * `fromNodeId`, a reason over 8 KiB, or a filter matching more than {@link MAX_BATCH_RUNS} runs.
   */
  async create(tenantId: string, input: CreateRunBatchInput): Promise<{ batch: RunBatchRow; created: boolean }> {
    if (!BATCH_ACTIONS.includes(input.action)) {
      throw bad('action', `unknown action ${JSON.stringify(input.action)}; expected one of ${BATCH_ACTIONS.join(', ')}`);
    }
    if (!Object.values(input.filter).some(namesRuns)) {
      throw bad('filter', 'a bulk action needs a filter that names the runs (status, workflowId, labels, …); an empty filter would match every run');
    }
    if (input.action === 'RETRY' && !input.fromNodeId) throw bad('fromNodeId', 'a RETRY needs fromNodeId: the node each run is retried from');
    if (input.action !== 'RETRY' && input.fromNodeId !== undefined) throw bad('fromNodeId', `fromNodeId applies to RETRY only, not to ${input.action}`);
    checkName('reason', input.reason, MAX_ERROR_CHARS);
    checkName('idempotencyKey', input.idempotencyKey);
    checkName('fromNodeId', input.fromNodeId);
    const now = this.ctx.testNow();
    try {
      return await this.ctx.retrying('createRunBatch', () =>
        new RunBatchRepository(this.ctx.ds).create(tenantId, {
          id: randomUUID(),
          action: input.action,
          filter: input.filter,
          filterJson: input.filterJson,
          fromNodeId: input.fromNodeId ?? null,
          reason: input.reason ?? null,
          idempotencyKey: input.idempotencyKey ?? null,
          now,
          max: MAX_BATCH_RUNS,
        }),
      );
    } catch (err) {
      if (err instanceof TooManyRuns) {
        throw bad('filter', `the filter matches more than ${MAX_BATCH_RUNS.toLocaleString('en-US')} runs: narrow it (a bulk action acts on at most that many)`);
      }
      throw err;
    }
  }

  /** Stops a running batch: its pending runs are left as they are. Null when the tenant has no such batch. */
  async stop(tenantId: string, id: string): Promise<RunBatchRow | null> {
    const now = this.ctx.testNow();
    return this.ctx.retrying('stopRunBatch', () => new RunBatchRepository(this.ctx.ds).stop(tenantId, id, now));
  }

  /**
   * The scheduler's pass: claims up to `limit` running batches whose next slice is due, and acts
   * on at most `batchRunsPerSecond` pending runs of each (fewer when the batch is stopped
   * meanwhile, or the slice has taken half its lease), then makes its next slice due a second
   * later (or completes it). Returns how many runs it acted on.
   */
  async processDue(limit = 10): Promise<number> {
    const { ctx } = this;
    const claimed = await claimRunBatches(ctx.ds, ctx.testNow(), limit, ctx.timerLeaseMs);
    let acted = 0;
    for (const b of claimed) {
      try {
        acted += await this.slice(b.tenantId, b.batchId);
      } catch (err) {
        ctx.log.error(`run batch ${b.batchId}: slice failed, the next pass goes on with it: ${message(err)}`);
      }
    }
    return acted;
  }

  /** One slice of a claimed batch. */
  private async slice(tenantId: string, batchId: string): Promise<number> {
    const { ctx } = this;
    const repo = new RunBatchRepository(ctx.ds);
    const batch = await repo.get(tenantId, batchId);
    if (!batch) return 0;
    const items = await repo.pendingSlice(tenantId, batchId, ctx.batchRunsPerSecond);
    // Well within the claim's lease, so no other scheduler takes the batch while this one acts.
    const until = performance.now() + ctx.timerLeaseMs / 2;
    let acted = 0;
    for (const item of items) {
      if (performance.now() > until) break;
      // A stop takes effect before the next run, not at the next slice; a stop that lands while
      // a run is acted on waits for that run's outcome to be counted. A transient failure stays
      // PENDING for the next slice.
      const done = await repo.actOnItem(tenantId, batchId, item.seq, ctx.testNow(), () => this.actOn(tenantId, batch, item.runId));
      if (!done) break;
      acted++;
      if (done.recorded) ctx.observe((o) => o.batchItem?.({ tenantId, batchId, action: batch.action, outcome: done.outcome }));
    }
    await repo.endSlice(tenantId, batchId, ctx.testNow(), 1_000);
    return acted;
  }

  /** Acts on one run of `batch`: what came of it, with why it was skipped or failed. */
  private async actOn(tenantId: string, batch: RunBatchRow, runId: string): Promise<{ outcome: BatchOutcome; error: string | null }> {
    const repo = new RunBatchRepository(this.ctx.ds);
    if (await repo.actedOn(tenantId, runId, batch.id)) return { outcome: 'APPLIED', error: null };
    const reason = batch.reason ?? undefined;
    const common = { runId, batchId: batch.id };
    try {
      let ignored: string | undefined;
      switch (batch.action) {
        case 'CANCEL':
          await this.runs.cancelRun(tenantId, { ...common, ...(reason ? { reason } : {}) });
          break;
        case 'RETRY':
          await this.runs.retryRun(tenantId, { ...common, fromNodeId: batch.fromNodeId! });
          break;
        case 'PAUSE':
          ({ ignored } = await this.runs.pauseRun(tenantId, { ...common, ...(reason ? { reason } : {}) }));
          break;
        case 'RESUME':
          ({ ignored } = await this.runs.resumeRun(tenantId, { ...common, ...(reason ? { reason } : {}) }));
          break;
      }
      return ignored === undefined ? { outcome: 'APPLIED', error: null } : { outcome: 'SKIPPED', error: ignored };
    } catch (err) {
      if (err instanceof WeftError && err.code === 'TRANSIENT') return { outcome: 'PENDING', error: null };
      if (err instanceof WeftError && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND' || err.code === 'BAD_USER_INPUT')) {
        return { outcome: 'SKIPPED', error: err.message };
      }
      return { outcome: 'FAILED', error: message(err).slice(0, 2_000) };
    }
  }
}

/** A BAD_USER_INPUT naming `path`. */
function bad(path: string, msg: string): WeftError {
  return new WeftError('BAD_USER_INPUT', `${path}: ${msg}`, [{ path, message: msg }]);
}

/**
 * True when a filter field's value narrows the runs: set, and neither an empty string (the run
 * filter ignores an empty workflow id, which would then match every run) nor an empty object.
 */
function namesRuns(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return false;
  return !(typeof v === 'object' && !(v instanceof Date) && Object.keys(v).length === 0);
}
