import { RunRepository, VersionLookupRepository, isUuid, type RunEntity } from '@weft/persistence';
import { badCharacter, checkLabels, MAX_ERROR_CHARS, WeftError, type RunEvent } from '../index.js';
import type { AfterCommit } from './after-commit.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { userError } from './error-mapping.js';
import type { EventOutcome } from './event-outcome.js';
import type { EventPipeline } from './event-pipeline.js';
import type { FencedStarts } from './fenced-starts.js';
import { checkJson, checkName, isVersion } from './input-checks.js';
import type { CancelRunInput, PauseRunInput, RetryRunInput, SendSignalInput, StartRunInput } from './inputs.js';
import type { RunStarts } from './run-starts.js';

/**
 * A user's commands — start, signal, cancel, pause, resume, retry — each checked, turned into its event and
 * handed to the event pipeline, or for a start to {@link FencedStarts} (one statement, when this
 * process can decide it from memory) else {@link RunStarts} in a transaction of its own (see
 * {@link RunCommands} for what each does). User input that cannot be stored is refused with
 * BAD_USER_INPUT naming the field and JSON path.
 */
export class UserCommands {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly pipeline: EventPipeline,
    private readonly after: AfterCommit,
    private readonly starts: RunStarts,
    private readonly fencedStarts: FencedStarts,
  ) {}

  /** Checks and starts a run, then its after-commit work; see `RunCommands.startRun`. */
  async startRun(tenantId: string, given: StartRunInput): Promise<{ runId: string; created: boolean; run?: RunEntity }> {
    const { ctx } = this;
    const input: StartRunInput = { ...given, labels: checkLabels(given.labels) };
    if (!isUuid(tenantId) || badCharacter(String(input.workflowId)) || !isVersion(input.version)) {
      throw new WeftError(
        'NOT_FOUND',
        `workflow ${JSON.stringify(input.workflowId)}${input.version === undefined ? '' : ` version ${input.version}`} not found`,
      );
    }
    checkName('idempotencyKey', input.idempotencyKey);
    checkName('startNodeId', input.startNodeId);
    checkJson('input', input.input, ctx.maxInputBytes);
    checkJson('config', input.config, ctx.maxInputBytes);
    const res =
      (await this.fencedStarts.start(tenantId, input)) ??
      (await ctx
        .inTenant('startRun', tenantId, (m) => this.starts.startIn(m, tenantId, input))
        .catch((err: unknown) => {
          // A rejected start rolled back with its run row: nothing to publish.
          throw userError(err, 'the run');
        }));
    if (!res.created) return { runId: res.runId, created: false };
    await this.after.run(tenantId, res.runId, res.outcome);
    return res.row ? { runId: res.runId, created: true, run: res.row } : { runId: res.runId, created: true };
  }

  /** Checks and applies a SignalReceived; see `RunCommands.sendSignal`. */
  async sendSignal(tenantId: string, s: SendSignalInput): Promise<{ delivered: boolean }> {
    checkName('name', s.name);
    checkJson('payload', s.payload, this.ctx.maxInputBytes);
    const outcome = await this.pipeline.command(tenantId, s.runId, 'the signal', () => ({
      ev: s.payload === undefined ? { type: 'SignalReceived', name: s.name } : { type: 'SignalReceived', name: s.name, payload: s.payload },
    }));
    return { delivered: outcome.kind === 'applied' && outcome.transition.signalDelivered === true };
  }

  /** Checks and applies a RunCancelled; see `RunCommands.cancelRun`. */
  async cancelRun(tenantId: string, c: CancelRunInput): Promise<void> {
    checkName('reason', c.reason, MAX_ERROR_CHARS);
    await this.pipeline.command(tenantId, c.runId, 'the cancellation', () => ({
      ev: { type: 'RunCancelled', ...optional({ reason: c.reason, batchId: c.batchId }) },
    }));
  }

  /** Checks and applies a RunPaused; see `RunCommands.pauseRun`. */
  async pauseRun(tenantId: string, p: PauseRunInput): Promise<{ ignored?: string }> {
    checkName('reason', p.reason, MAX_ERROR_CHARS);
    const outcome = await this.pipeline.command(tenantId, p.runId, 'the pause', () => ({
      ev: { type: 'RunPaused', ...optional({ reason: p.reason, batchId: p.batchId }) },
    }));
    return ignoredBy(outcome);
  }

  /** Checks and applies a RunResumed; see `RunCommands.resumeRun`. */
  async resumeRun(tenantId: string, p: PauseRunInput): Promise<{ ignored?: string }> {
    checkName('reason', p.reason, MAX_ERROR_CHARS);
    const outcome = await this.pipeline.command(tenantId, p.runId, 'the resume', () => ({
      ev: { type: 'RunResumed', ...optional({ reason: p.reason, batchId: p.batchId }) },
    }));
    return ignoredBy(outcome);
  }

  /** Checks and applies a RunRetried; see `RunCommands.retryRun`. */
  async retryRun(tenantId: string, r: RetryRunInput): Promise<void> {
    if (!isVersion(r.version)) throw new WeftError('NOT_FOUND', `version ${r.version} not found`);
    checkName('fromNodeId', r.fromNodeId);
    checkJson('input', r.input, this.ctx.maxInputBytes);
    checkJson('config', r.config, this.ctx.maxInputBytes);
    await this.refuseChildRetry(tenantId, r.runId);
    if (r.version !== undefined) await this.refuseDeprecatedRetry(tenantId, r.runId, r.version);
    await this.pipeline.command(tenantId, r.runId, 'the retry', (run) => {
      const version = r.version ?? run.version;
      const ev: RunEvent = { type: 'RunRetried', fromNodeId: r.fromNodeId, version, ...optional({ batchId: r.batchId }) };
      if (r.failedIterationsOnly === true) ev.failedIterationsOnly = true;
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
   * Refuses to retry a child run on its own (see `RunCommands.retryRun`); a run's parent
   * never changes once it is created, so reading it before the retry's transaction is safe.
   * @throws WeftError CONFLICT naming the parent run and its SUBWORKFLOW node.
   */
  private async refuseChildRetry(tenantId: string, runId: string): Promise<void> {
    if (!isUuid(tenantId) || !isUuid(runId)) return;
    const parent = await this.ctx.retrying('retry check', () => new RunRepository(this.ctx.ds).parentOfRun(tenantId, runId));
    if (!parent) return;
    const { parentRunId, parentNodeId } = parent;
    throw new WeftError(
      'CONFLICT',
      `run ${runId} was started by run ${parentRunId}'s node ${parentNodeId}; retry run ${parentRunId} from node ${parentNodeId} instead`,
    );
  }
}

/** The fields of `o` that are set. */
function optional<T extends Record<string, string | undefined>>(o: T): Partial<{ [K in keyof T]: string }> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<{ [K in keyof T]: string }>;
}

/** Why an applied command changed nothing (the machine ignored it), as `{ignored}`; `{}` when it changed the run. */
function ignoredBy(outcome: EventOutcome): { ignored?: string } {
  return outcome.kind === 'applied' && outcome.transition.ignored !== undefined ? { ignored: outcome.transition.ignored } : {};
}
