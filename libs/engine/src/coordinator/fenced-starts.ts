import { HistoryRepository, startWrite, type HistoryEntry, type RunPatch, type StepCommitter } from '@weft/persistence';
import { FLOW_LIMITS, Machine, RunStatus, runFlowOf, type RunEvent, type RunSnapshot, type Transition } from '../index.js';
import { ActionWriter, NotFenceable } from './action-writer.js';
import { appliedOutcome } from './applied-outcome.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { OutputsOnlyStore } from './fenced-steps.js';
import { historyEntry, historyEvent } from './history.js';
import type { StartRunInput } from './inputs.js';
import { newTopRun, startedRow, type CreatedIn } from './run-starts.js';

/**
 * A user's start decided from memory and written in one statement ({@link startWrite}) through
 * the process's {@link StepCommitter}, with the other statements queued meanwhile: no
 * transaction of its own, no version lookup, no second round trip. It needs the version this
 * process's last start of the workflow ran on (`ctx.startVersions`, which the statement checks
 * is still the one to run on), the definition cached, and the database's clock known.
 *
 * {@link start} resolves undefined, having written nothing, whenever the start must take the
 * locking path ({@link RunStarts}) instead: any of those unknown, a priority out of range, a
 * workflow with a run concurrency limit, a start the machine rejects or that ends the run at
 * once, an action that needs a row read, a version that changed or was deprecated since, an
 * idempotency key already used, or any error of the message (the locking path then meets it
 * alone and says what it is).
 */
export class FencedStarts {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly committer: StepCommitter,
  ) {}

  /** Starts a run of `input` on the fenced path; the run once committed, undefined when it must take the locking path. */
  async start(tenantId: string, input: StartRunInput): Promise<CreatedIn | undefined> {
    const { ctx } = this;
    if (!ctx.fencedSteps) return undefined;
    const version = ctx.startVersions.get(tenantId, input.workflowId, input.version);
    const dag = version === undefined ? undefined : ctx.cachedDag(tenantId, input.workflowId, version);
    const now = ctx.estimatedClock();
    if (version === undefined || !dag || !now || runFlowOf(dag.definition).concurrency) return undefined;
    const runId = ctx.newId();
    const { run, row } = newTopRun(runId, input, version, dag, now, { status: RunStatus.Running });
    // A priority the row cannot hold would fail the whole message, the other statements with it.
    if (!Number.isInteger(run.priority) || run.priority < FLOW_LIMITS.minPriority || run.priority > FLOW_LIMITS.maxPriority) return undefined;
    const ev: RunEvent = input.startNodeId ? { type: 'RunStarted', startNodeId: input.startNodeId } : { type: 'RunStarted' };
    const nodes = new Map();
    const snapshot: RunSnapshot = {
      id: runId,
      workflowId: run.workflowId,
      version,
      status: RunStatus.Running,
      context: { input: run.input, config: run.config, tasks: new Map() },
      nodes,
      depth: 0,
    };
    let transition: Transition;
    try {
      transition = await new Machine(dag, snapshot, ctx.machineDeps(new OutputsOnlyStore(ctx, tenantId, runId), now)).apply(ev);
    } catch {
      return undefined; // a rejection, or a read a new run cannot need: the locking path says what it is
    }
    if (transition.ignored !== undefined || snapshot.status !== RunStatus.Running || transition.actions.some((a) => a.type === 'FinishRun')) return undefined;
    const seq = 1;
    const writer = ActionWriter.capturing(ctx.ds.manager, tenantId, run, now, dag);
    const history = new HistoryRepository(ctx.ds.manager);
    let recorded: HistoryEntry | undefined;
    let written;
    try {
      written = await writer.write(transition.actions, (w) => {
        recorded = historyEntry({ seq, ev: historyEvent(ev, dag, nodes), now, actions: transition.actions, patch: w.run });
        // The run row is inserted as the event leaves it: only the history row is written apart.
        return history.parts(tenantId, runId, recorded).slice(0, 1);
      });
    } catch (err) {
      if (err instanceof NotFenceable) return undefined;
      throw err;
    }
    if (!onlyRunning(written.run)) return undefined;
    // The deadline its start armed is inserted with the row.
    if (written.run.deadlineAt) row.deadlineAt = written.run.deadlineAt;
    const statement = startWrite(tenantId, row, seq, input.version ?? null, writer.parts);
    // The committer refuses a value that would fail its whole message (jsonb holds no NUL): alone, on the locking path.
    if (!statement) return undefined;
    try {
      const [committed] = await this.committer.submit({ tenantId, ...statement });
      if (committed?.ok !== true) return undefined;
    } catch {
      return undefined;
    }
    const outcome = appliedOutcome({ run, ev, transition, status: RunStatus.Running, seq, now, writer, written, entry: recorded!, dag, nodes });
    ctx.snapshots.put(tenantId, runId, seq, nodes, { ...run, eventSeq: seq, deadlineAt: row.deadlineAt ?? null }, now);
    return { runId, created: true, outcome, row: startedRow(tenantId, run, row, outcome) };
  }
}

/**
 * True when a start's run patch changes nothing but, at most, the status to RUNNING (what the
 * inserted row already says) and the deadline (which the row is inserted with).
 */
function onlyRunning(patch: RunPatch): boolean {
  return Object.entries(patch).every(([k, v]) => v === undefined || (k === 'status' && v === RunStatus.Running) || k === 'deadlineAt');
}
