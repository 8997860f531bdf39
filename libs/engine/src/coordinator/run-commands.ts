import { RunRepository, VersionLookupRepository, isUuid, type RunEntity } from '@weft/persistence';
import { badCharacter, MAX_ERROR_CHARS, WeftError, type RunEvent } from '../index.js';
import type { AfterCommit } from './after-commit.js';
import type { FireTimerInput } from './applied.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { userError } from './error-mapping.js';
import type { EventPipeline } from './event-pipeline.js';
import { checkJson, checkName, isVersion, reportField } from './input-checks.js';
import type { CancelRunInput, ReportCompletedInput, ReportFailedInput, ReportResult, RetryRunInput, SendSignalInput, StartRunInput } from './inputs.js';
import { describeJsonProblem, jsonProblem, sanitizeText } from './storable.js';
import type { RunStarts, StartedIn } from './run-starts.js';

/**
 * The commands a run takes — a user's start, signal, cancel and retry; a worker's reports; the
 * scheduler's timers — each checked, turned into its event and handed to the event pipeline.
 *
 * Values from outside are checked before they are stored: a worker output PostgreSQL cannot hold
 * (NUL character or lone surrogate in a string or key, too deep, over `maxOutputBytes`) fails the
 * attempt instead; a worker's error text is sanitized and cut; user input that cannot be stored
 * is refused with BAD_USER_INPUT naming the field and JSON path.
 */
export class RunCommands {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly pipeline: EventPipeline,
    private readonly after: AfterCommit,
    private readonly starts: RunStarts,
  ) {}

  /**
   * Creates a run (UUIDv7 id, status RUNNING) of `workflowId` at `version` (default: the
   * workflow's pinned default version, else the latest) and applies RunStarted in the same
   * transaction; a deprecated version is refused, explicit or default. With an `idempotencyKey`
   * already used by the tenant, returns that run with `created: false` whatever the other fields
   * say — even if its version was deprecated since — also when duplicates race (the unique index
   * decides the winner).
   * @throws WeftError NOT_FOUND for an unknown workflow or version; BAD_USER_INPUT when the
   * version is deprecated, when the machine rejects the start (unknown start node…), when the
   * input, config, idempotency key or start node cannot be stored (NUL character, lone
   * surrogate, too large — the message names the field and JSON path) or when the database
   * refuses a value the run would store; TRANSIENT.
   *
   * `run` is the new run's row as committed when the start left it RUNNING or QUEUED (see
   * {@link StartedIn.row}), so the caller need not read it back; absent for a run that ended at
   * its start and for a run the idempotency key already named.
   */
  async startRun(tenantId: string, input: StartRunInput): Promise<{ runId: string; created: boolean; run?: RunEntity }> {
    const { ctx } = this;
    if (!isUuid(tenantId) || badCharacter(String(input.workflowId)) || !isVersion(input.version)) {
      throw new WeftError('NOT_FOUND', `workflow ${JSON.stringify(input.workflowId)}${input.version === undefined ? '' : ` version ${input.version}`} not found`);
    }
    checkName('idempotencyKey', input.idempotencyKey);
    checkName('startNodeId', input.startNodeId);
    checkJson('input', input.input, ctx.maxInputBytes);
    checkJson('config', input.config, ctx.maxInputBytes);
    const res = await ctx
      .inTenant('startRun', tenantId, (m) => this.starts.startIn(m, tenantId, input))
      .catch((err: unknown) => {
        // A rejected start rolled back with its run row: nothing to publish.
        throw userError(err, 'the run');
      });
    if (res.applied) await this.after.run(tenantId, res.runId, res.applied);
    return res.row ? { runId: res.runId, created: res.created, run: res.row } : { runId: res.runId, created: res.created };
  }

  /**
   * A worker's NodeCompleted. Stale or duplicate reports (another attempt, a finished task) and
   * reports for unknown runs are not errors: they return `{ignored}` (and, for a known run, leave
   * a history row; a report whose attempt is not a valid attempt number leaves none).
   *
   * An output the database cannot hold is not stored: the report becomes a NodeFailed of the same
   * attempt (so the node's retry policy applies) with the reason — `output is not storable: NUL
   * character at $.s`, `output too large: 2.3 MiB > 1 MiB (OUTPUT_TOO_LARGE)`
   * (`maxOutputBytes`). Should the database still refuse a value this event would write (e.g. a
   * downstream input a template computed), the event is applied once more as such a NodeFailed.
   *
   * Fencing: a report carrying a `leaseToken` for the task's current, still active attempt is
   * ignored when the token is not the task's current `lease_token` — the attempt was
   * re-dispatched (lease sweep, Bull's stalled-job redelivery) and claimed by another execution,
   * or revoked by the sweep. It is recorded in the history with `ignored` = `stale lease: attempt
   * N of node X was re-dispatched; this execution's lease was superseded` (N 0-based).
   * @throws WeftError TRANSIENT; the database's error if even that NodeFailed cannot be stored.
   */
  async reportCompleted(tenantId: string, r: ReportCompletedInput): Promise<ReportResult> {
    const bad = jsonProblem(r.output, this.ctx.maxOutputBytes);
    if (bad) return this.reportFailed(tenantId, { ...r, error: describeJsonProblem('output', bad, 'OUTPUT_TOO_LARGE') });
    const ev: RunEvent = { type: 'NodeCompleted', taskId: reportField(r.taskId), nodeId: reportField(r.nodeId), attempt: r.attempt, output: r.output };
    return this.pipeline.report(tenantId, r.runId, ev, r.leaseToken, r.takeFrom);
  }

  /**
   * A worker's NodeFailed; see {@link RunCommands.reportCompleted} for ignored reports. The
   * error text is stored sanitized: NUL characters and lone surrogates become U+FFFD, and text
   * beyond 8 KiB is cut.
   */
  async reportFailed(tenantId: string, r: ReportFailedInput): Promise<ReportResult> {
    const ev: RunEvent = {
      type: 'NodeFailed',
      taskId: reportField(r.taskId),
      nodeId: reportField(r.nodeId),
      attempt: r.attempt,
      error: sanitizeText(typeof r.error === 'string' ? r.error : String(r.error), MAX_ERROR_CHARS),
      ...(r.retryable === undefined ? {} : { retryable: r.retryable !== false }),
    };
    return this.pipeline.report(tenantId, r.runId, ev, r.leaseToken, r.takeFrom);
  }

  /**
   * TimerFired for a WAITING task. A timer the machine ignores (task no longer waiting, run
   * finished) has its `wake_at` cleared so it is never claimed again. When the database refuses a
   * value the event would write (a WAIT's successor input computed by a template), the waiting
   * task and the run fail with the reason instead, so the timer never fires again.
   */
  async fireTimer(tenantId: string, t: FireTimerInput): Promise<ReportResult> {
    return this.pipeline.report(tenantId, t.runId, { type: 'TimerFired', taskId: reportField(t.taskId), nodeId: reportField(t.nodeId) });
  }

  /**
   * Delivers a signal to the oldest node waiting for `name`, or buffers it (`delivered: false`)
   * unless the run's buffer is full (`maxBufferedSignals`, `maxBufferedSignalBytes`). A rejected
   * signal writes nothing.
   * @throws WeftError NOT_FOUND (unknown run), BAD_USER_INPUT (no name; a name or payload that
   * cannot be stored — the message names the field and JSON path; a payload over
   * `maxInputBytes`), CONFLICT (run finished; a signal to buffer beyond the run's caps, naming
   * the run, the cap and the buffered count and bytes), TRANSIENT.
   */
  async sendSignal(tenantId: string, s: SendSignalInput): Promise<{ delivered: boolean }> {
    checkName('name', s.name);
    checkJson('payload', s.payload, this.ctx.maxInputBytes);
    const applied = await this.pipeline.command(tenantId, s.runId, 'the signal', () => ({
      ev: s.payload === undefined ? { type: 'SignalReceived', name: s.name } : { type: 'SignalReceived', name: s.name, payload: s.payload },
    }));
    return { delivered: applied.transition?.signalDelivered === true };
  }

  /**
   * Cancels the run: every active task becomes CANCELLED, the run CANCELLED. A rejected cancel
   * writes nothing.
   * @throws WeftError NOT_FOUND, BAD_USER_INPUT (a reason that cannot be stored or is longer than
   * 8 KiB), CONFLICT (run already finished), TRANSIENT.
   */
  async cancelRun(tenantId: string, c: CancelRunInput): Promise<void> {
    checkName('reason', c.reason, MAX_ERROR_CHARS);
    await this.pipeline.command(tenantId, c.runId, 'the cancellation', () => ({ ev: c.reason === undefined ? { type: 'RunCancelled' } : { type: 'RunCancelled', reason: c.reason } }));
  }

  /**
   * Restarts the run from `fromNodeId` (that node and its descendants are reset) on `version`
   * (default the run's), optionally with new input/config. A rejected retry writes nothing.
   *
   * A child run (started by a SUBWORKFLOW node) is never retried on its own: its parent's task
   * already failed with the child's failure and would stay FAILED while the child succeeded.
   * Retrying the parent from that node starts a new child instead.
   * @throws WeftError NOT_FOUND (run or version), BAD_USER_INPUT (unknown node; input or config
   * that cannot be stored; `version` is another, deprecated version), CONFLICT (tasks still
   * active; a child run, naming its parent run and the parent's node to retry; a run of a
   * concurrency key that is still QUEUED, or that ended while its key has no free slot — a retry
   * never cancels nor waits for another run), TRANSIENT.
   */
  async retryRun(tenantId: string, r: RetryRunInput): Promise<void> {
    if (!isVersion(r.version)) throw new WeftError('NOT_FOUND', `version ${r.version} not found`);
    checkName('fromNodeId', r.fromNodeId);
    checkJson('input', r.input, this.ctx.maxInputBytes);
    checkJson('config', r.config, this.ctx.maxInputBytes);
    await this.refuseChildRetry(tenantId, r.runId);
    if (r.version !== undefined) await this.refuseDeprecatedRetry(tenantId, r.runId, r.version);
    await this.pipeline.command(tenantId, r.runId, 'the retry', (run) => {
      const version = r.version ?? run.version;
      const ev: RunEvent = { type: 'RunRetried', fromNodeId: r.fromNodeId, version };
      if (r.input !== undefined) ev.input = r.input;
      if (r.config !== undefined) ev.config = r.config;
      return { ev, version };
    });
  }

  /**
   * A retry that moves run `runId` onto another `version` may not pick a deprecated one (a retry
   * on the run's own version is always allowed: it is no new run). Checked in its own short
   * transaction before the retry; an unknown run or version is left to the retry to report.
   * @throws WeftError BAD_USER_INPUT naming the workflow and version.
   */
  private async refuseDeprecatedRetry(tenantId: string, runId: string, version: number): Promise<void> {
    if (!isUuid(tenantId) || !isUuid(runId)) return;
    const row = await this.ctx.retrying('retryRun', () => new VersionLookupRepository(this.ctx.ds).retryTarget(tenantId, runId, version));
    if (!row || !row.deprecated || row.version === version) return;
    const msg = `workflow ${row.workflowId} version ${version} is deprecated: a retry may not move run ${runId} onto it; retry on the run's own version ${row.version} or another version, or restore version ${version} with deprecateVersion(deprecated: false)`;
    throw new WeftError('BAD_USER_INPUT', msg, [{ path: 'version', message: msg }]);
  }

  /**
   * Refuses to retry a child run on its own (see {@link RunCommands.retryRun}); a run's parent
   * never changes once it is created, so reading it before the retry's transaction is safe.
   * @throws WeftError CONFLICT naming the parent run and its SUBWORKFLOW node.
   */
  private async refuseChildRetry(tenantId: string, runId: string): Promise<void> {
    if (!isUuid(tenantId) || !isUuid(runId)) return;
    const parent = await this.ctx.retrying('retry check', () => new RunRepository(this.ctx.ds).parentOfRun(tenantId, runId));
    if (!parent) return;
    const { parentRunId, parentNodeId } = parent;
    throw new WeftError('CONFLICT', `run ${runId} was started by run ${parentRunId}'s node ${parentNodeId}; retry run ${parentRunId} from node ${parentNodeId} instead`);
  }
}
