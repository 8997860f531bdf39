import type { DataSource, EntityManager } from 'typeorm';
import { v4 as uuidv4, v7 as uuidv7 } from 'uuid';
import {
  TransientDbError,
  UniqueViolation,
  isInvalidDataError,
  isUuid,
  jsonb,
  sql,
  RunRepository,
  byTenant,
  claimDueTimers,
  claimLostTasks,
  claimOutbox,
  sqlLiteral,
  withTenant,
  withTenantStatement,
  type ClaimedLostTask,
  type ClaimedOutboxRow,
} from '@weft/persistence';
import { WeftError } from '../errors.js';
import type { WorkflowDag } from '../model/dag.js';
import { isSensitive, REDACTED, trimOutput } from '../model/payload-hygiene.js';
import type { WorkflowDefinition } from '../model/workflow-definition.js';
import { RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { CelTemplateResolver } from '../template/resolver.js';
import { DEFAULT_MAX_RUN_TREE, DEFAULT_MAX_SUBWORKFLOW_DEPTH, DEFAULT_MAX_VALUE_BYTES, type ChildRun, type Deps, type Store, type TemplateResolver, type Transition } from '../statemachine/deps.js';
import { MachineError, StoreError } from '../statemachine/errors.js';
import type { NodeFailed, RunEvent, TimerFired } from '../statemachine/events.js';
import { Machine } from '../statemachine/machine.js';
import type { BufferedSignal, NodeState, RunSnapshot } from '../statemachine/state.js';
import type { Action, FinishRun, StartChildRun } from '../statemachine/actions.js';
import { ActionWriter, summarizeAction, type RunPatch } from './action-writer.js';
import { runWrites, type WritePart } from './write-parts.js';
import { DagCache } from './dag-cache.js';
import { DEFAULT_MAX_BUFFERED_SIGNAL_BYTES, DEFAULT_MAX_BUFFERED_SIGNALS, refuseOverfullSignalBuffer, type SignalBufferCaps } from './signal-buffer.js';
import { jobId, type JobProbe, type RunUpdatePublisher, type TakenTask, type TaskDispatcher, type TaskJob } from './ports.js';
import {
  DEFAULT_MAX_INPUT_BYTES,
  DEFAULT_MAX_OUTPUT_BYTES,
  MAX_ERROR_CHARS,
  MAX_NAME_CHARS,
  badCharacter,
  describeJsonProblem,
  jsonProblem,
  sanitizeText,
} from './storable.js';

/** Where the coordinator reports what it could not do after commit (enqueue, publish). */
export interface CoordinatorLogger {
  warn(message: string): void;
  error(message: string): void;
}

/** Options of {@link RunCoordinator}; every field has a default. */
export interface RunCoordinatorOptions {
  /**
   * A clock to use instead of the database's, for tests (a fake clock). By default every time the
   * coordinator computes with — the machine's now (WAIT wake-ups, retry `not_before`, timeouts,
   * `system.now`), the timestamps it writes, lease expiries and the scheduler's "due" comparisons
   * — is PostgreSQL's: `clock_timestamp()` read in the event's transaction after the run lock, and
   * `now()` inside the claim functions. The process clock is never used, so a worker or
   * scheduler whose clock is off cannot make a timer fire early or a lease expire.
   */
  now?: () => Date;
  /** Id generator for runs, tasks and signals (default UUIDv7, time-ordered). */
  newId?: () => string;
  logger?: CoordinatorLogger;
  /** Retries of an event after a transient failure before TRANSIENT is thrown (default 5). */
  maxEventRetries?: number;
  /** Template resolver for the machine (default a {@link CelTemplateResolver}). */
  templates?: TemplateResolver;
  /** DAG cache size in workflow versions (default 512). */
  dagCacheSize?: number;
  /**
   * How long a claimed timer is hidden from other schedulers before it may fire again, ms
   * (default 10 000): how late a timer fires when the scheduler that claimed it dies before
   * applying it (applying takes milliseconds; one fired twice is ignored by fencing).
   */
  timerLeaseMs?: number;
  /** Age an un-enqueued outbox row must reach before the relay takes it, ms (default 5 000). */
  outboxGraceMs?: number;
  /** How long a relay's claim on an outbox row lasts, ms (default 10 000): the delay when its scheduler dies mid-relay. */
  outboxLeaseMs?: number;
  /**
   * The lease of a dispatched worker attempt, ms after its `not_before` (default 30 000): past it,
   * an attempt no worker claimed whose job is not live is re-dispatched by
   * {@link RunCoordinator.sweepLostTasks}. Also how far the sweep pushes a lease it found live.
   */
  dispatchLeaseMs?: number;
  /**
   * The lease a worker's claim ({@link RunCoordinator.markRunning}) and each of its heartbeats
   * ({@link RunCoordinator.heartbeat}) give, ms after the database's now (default 15 000). A
   * worker heartbeats every third of it.
   */
  runLeaseMs?: number;
  /**
   * Largest task output a worker may report, in bytes of its JSON text (default 1 MiB); a larger
   * one fails the attempt (`OUTPUT_TOO_LARGE`).
   */
  maxOutputBytes?: number;
  /** Largest signal payload, run input or run config, in bytes of its JSON text (default 1 MiB). */
  maxInputBytes?: number;
  /** The deepest chain of SUBWORKFLOW child runs (default 10): a run at this depth cannot start a child. */
  maxSubworkflowDepth?: number;
  /** The most runs one tree of child runs may hold (default 1,000). */
  maxRunTree?: number;
  /** Unconsumed signals one run may buffer (default 1,000); one more is refused with CONFLICT. */
  maxBufferedSignals?: number;
  /** Bytes of payload (stored JSON text) one run's unconsumed signals may hold (default 16 MiB). */
  maxBufferedSignalBytes?: number;
}

/** Input of {@link RunCoordinator.startRun}. */
export interface StartRunInput {
  workflowId: string;
  /** Default: the latest published version. */
  version?: number;
  input?: JsonValue;
  config?: JsonValue;
  /** Overrides the definition's entry node. */
  startNodeId?: string;
  /** A second start with the same key (per tenant) returns the first run. */
  idempotencyKey?: string;
}

/** A worker's successful report of one task attempt. */
export interface ReportCompletedInput {
  runId: string;
  taskId: string;
  nodeId: string;
  attempt: number;
  output: JsonValue;
  /**
   * The lease token {@link RunCoordinator.markRunning} returned to this execution. A report whose
   * token is not the task's current one (the attempt was re-dispatched and claimed again) is
   * ignored. Without a token the report is fenced by `attempt` only (tools, tests).
   */
  leaseToken?: string;
  /**
   * Eager dispatch: the queue of the reporting worker, which will execute at once the first
   * attempt this report dispatches on that queue that is due now, instead of it going through
   * Bull. That attempt comes back as {@link ReportResult.taken}, already RUNNING under its own
   * lease token.
   */
  takeFrom?: string;
}

/** A worker's failed report of one task attempt; `retryable: false` asks to fail for good. */
export interface ReportFailedInput {
  runId: string;
  taskId: string;
  nodeId: string;
  attempt: number;
  error: string;
  retryable?: boolean;
  /** See {@link ReportCompletedInput.leaseToken}. */
  leaseToken?: string;
  /** See {@link ReportCompletedInput.takeFrom}. */
  takeFrom?: string;
}

/** A lease a worker holds: the attempt it executes and the token its claim returned. */
export interface HeldLease {
  tenantId: string;
  taskId: string;
  attempt: number;
  leaseToken: string;
}

/** A timer of a WAITING task that came due. */
export interface FireTimerInput {
  runId: string;
  taskId: string;
  nodeId: string;
}

/** Input of {@link RunCoordinator.sendSignal}. */
export interface SendSignalInput {
  runId: string;
  name: string;
  payload?: JsonValue;
}

/** Input of {@link RunCoordinator.cancelRun}. */
export interface CancelRunInput {
  runId: string;
  reason?: string;
}

/** Input of {@link RunCoordinator.retryRun}; `version` defaults to the run's current version. */
export interface RetryRunInput {
  runId: string;
  fromNodeId: string;
  version?: number;
  input?: JsonValue;
  config?: JsonValue;
}

/** Outcome of a worker/scheduler report: `ignored` says why it changed nothing. */
export interface ReportResult {
  ignored?: string;
  /** The attempt the reporting worker took (see {@link ReportCompletedInput.takeFrom}). */
  taken?: TakenTask;
}

interface RunRow {
  id: string;
  workflow_id: string;
  version: number;
  status: RunStatus;
  input: JsonValue;
  config: JsonValue;
  event_seq: number;
  /** The SUBWORKFLOW task (and its attempt) of the parent run that started this run, if any. */
  parent_run_id: string | null;
  parent_task_id: string | null;
  parent_attempt: number | null;
  depth: number;
  /** For a child run, the run at the top of its tree; null for that run itself. */
  root_run_id: string | null;
}

/** The `runs` columns of a {@link RunRow}. */
const RUN_COLUMNS = 'id, workflow_id, version, status, input, config, event_seq, parent_run_id, parent_task_id, parent_attempt, depth, root_run_id';

interface TaskStateRow {
  node_id: string;
  id: string;
  status: TaskStatus;
  attempt: number;
  branches: string[] | null;
  awaited_signal: string | null;
  /** Only for FAILED tasks: templates read it as `tasks.<id>.error`. */
  error: string | null;
  lease_token: string | null;
  /** A `for_each` iteration's element index; null for a node's own task. */
  iteration: number | null;
  /** When a waiting SUBWORKFLOW task's next child may start (its retry's backoff); null otherwise. */
  retry_at: Date | null;
}

/** What one committed event leaves for after-commit work and for the caller. */
interface Applied {
  transition?: Transition;
  rejected?: MachineError;
  /** Set when the coordinator itself ignored the event (a report with a stale lease token). */
  ignored?: string;
  status: RunStatus;
  seq: number;
  jobs: TaskJob[];
  /** The event's clock reading (database time unless a test clock is injected). */
  now: Date;
  /**
   * Events applied to other runs in the same transaction: child runs started (StartChildRun) or
   * cancelled with their parent. Their jobs and updates go out after commit like this one's.
   */
  nested?: Array<{ runId: string; applied: Applied }>;
  /** Parent SUBWORKFLOW tasks woken because this run (or a nested one) ended: fired after commit. */
  wakes?: FireTimerInput[];
  /** The attempt the reporting worker took for itself (eager dispatch); not in `jobs`. */
  taken?: TakenTask;
  /**
   * The run's node states after the event (as committed), kept by {@link SnapshotCache} for the
   * run's next event; absent when the event was not applied through the machine (or rejected).
   */
  nodes?: Map<string, NodeState>;
}

/** The `tasks t` columns of a {@link TaskStateRow}: what the machine decides on, no inputs or outputs. */
const TASK_STATE_COLUMNS = `t.node_id, t.id, t.status, t.attempt, t.branches, t.awaited_signal,
  CASE WHEN t.status = 'FAILED' THEN t.error END AS error, t.lease_token, t.iteration,
  CASE WHEN t.status = 'WAITING' THEN t.retry_at END AS retry_at`;

/** Task statuses of an attempt that is dispatched and not finished. */
const ACTIVE_WORKER = new Set<string>([TaskStatus.Pending, TaskStatus.Queued, TaskStatus.Running]);

const RUN_NOT_FOUND = 'run not found';

/**
 * The shell around the pure state machine (DESIGN §4): the only code that turns events into
 * persisted state. Every event runs in one tenant transaction:
 *
 * BEGIN with `set_config('app.tenant_id', …, true)` (one round trip); lock the run row (`FOR
 * UPDATE`, which serializes a run's events across processes) and, in the same statement, read
 * the database clock (`clock_timestamp()`, the event's now) and the reported task; the node
 * states are those this process kept after the run's previous event ({@link SnapshotCache}),
 * else every task row (no inputs or outputs); get the DAG from the per-version cache;
 * `Machine.apply`; persist the actions in order ({@link ActionWriter}), whose last writes go in
 * one statement with the `run_events` row and the `runs` update; COMMIT. On a chain's step that
 * is four round trips. After commit: enqueue the dispatched jobs (a failure is logged: the
 * outbox relay retries) — except the one a reporting worker took for itself (eager dispatch,
 * {@link ReportCompletedInput.takeFrom}) — and publish a run update. Every public method returns
 * after both.
 *
 * A transient failure (StoreError, {@link TransientDbError}) retries the whole event with a
 * small jittered backoff, then throws WeftError `TRANSIENT`. Machine rejections map to
 * WeftError: INVALID_REQUEST → `BAD_USER_INPUT`; RUN_FINISHED, RUN_ACTIVE → `CONFLICT`. A
 * rejected user command rolls back and leaves no history row; an ignored or rejected worker or
 * scheduler report keeps its history row.
 *
 * Values from outside are checked before they are stored (`./storable.ts`): a worker output
 * PostgreSQL cannot hold (NUL character or lone surrogate in a string or key, too deep, over
 * `maxOutputBytes`) fails the attempt instead; a worker's error text is sanitized and cut;
 * user input that cannot be stored is refused with BAD_USER_INPUT naming the field and JSON path.
 * What the database still refuses as data ({@link isInvalidDataError}, e.g. a NUL character a
 * template computed) is never retried: a report is applied once more as its failure, a user
 * command is refused with BAD_USER_INPUT. So no report can leave a run RUNNING for good.
 */
export class RunCoordinator {
  /** The injected test clock; undefined in production (the database's clock is used). */
  private readonly testClock: (() => Date) | undefined;
  private readonly newId: () => string;
  private readonly log: CoordinatorLogger;
  private readonly maxRetries: number;
  private readonly templates: TemplateResolver;
  private readonly dags: DagCache;
  private readonly timerLeaseMs: number;
  private readonly outboxGraceMs: number;
  private readonly outboxLeaseMs: number;
  private readonly dispatchLeaseMs: number;
  private readonly runLeaseMs: number;
  private readonly maxOutputBytes: number;
  private readonly maxInputBytes: number;
  private readonly maxSubworkflowDepth: number;
  private readonly maxRunTree: number;
  private readonly signalCaps: SignalBufferCaps;
  private readonly snapshots = new SnapshotCache();

  constructor(
    private readonly ds: DataSource,
    private readonly dispatcher: TaskDispatcher,
    private readonly publisher: RunUpdatePublisher,
    opts: RunCoordinatorOptions = {},
  ) {
    this.testClock = opts.now;
    this.newId = opts.newId ?? (() => uuidv7());
    this.log = opts.logger ?? { warn: (m) => console.warn(m), error: (m) => console.error(m) };
    this.maxRetries = Math.max(0, opts.maxEventRetries ?? 5);
    this.templates = opts.templates ?? new CelTemplateResolver();
    this.dags = new DagCache(opts.dagCacheSize);
    this.timerLeaseMs = opts.timerLeaseMs ?? 10_000;
    this.outboxGraceMs = opts.outboxGraceMs ?? 5_000;
    this.outboxLeaseMs = opts.outboxLeaseMs ?? 10_000;
    this.dispatchLeaseMs = opts.dispatchLeaseMs ?? 30_000;
    this.runLeaseMs = opts.runLeaseMs ?? 15_000;
    this.maxOutputBytes = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.maxInputBytes = opts.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
    this.maxSubworkflowDepth = opts.maxSubworkflowDepth ?? DEFAULT_MAX_SUBWORKFLOW_DEPTH;
    this.maxRunTree = opts.maxRunTree ?? DEFAULT_MAX_RUN_TREE;
    this.signalCaps = {
      maxSignals: opts.maxBufferedSignals ?? DEFAULT_MAX_BUFFERED_SIGNALS,
      maxBytes: opts.maxBufferedSignalBytes ?? DEFAULT_MAX_BUFFERED_SIGNAL_BYTES,
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Commands

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
   */
  async startRun(tenantId: string, input: StartRunInput): Promise<{ runId: string; created: boolean }> {
    if (!isUuid(tenantId) || badCharacter(String(input.workflowId)) || !isVersion(input.version)) {
      throw new WeftError('NOT_FOUND', `workflow ${JSON.stringify(input.workflowId)}${input.version === undefined ? '' : ` version ${input.version}`} not found`);
    }
    this.checkName('idempotencyKey', input.idempotencyKey);
    this.checkName('startNodeId', input.startNodeId);
    this.checkJson('input', input.input);
    this.checkJson('config', input.config);
    const res = await this.retrying('startRun', () =>
      withTenant(this.ds, tenantId, async (m) => {
        if (input.idempotencyKey !== undefined) {
          const existing = await this.findByIdempotencyKey(m, tenantId, input.idempotencyKey);
          if (existing) return { runId: existing, created: false as const };
        }
        const version = await runnableVersion(m, tenantId, input.workflowId, input.version);
        const dag = await this.dag(m, tenantId, input.workflowId, version);
        const now = await this.clock(m);
        const runId = this.newId();
        const runInput = input.input ?? {};
        const runConfig = input.config ?? {};
        const ins = await sql<{ id: string }>(
          m,
          `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, idempotency_key, start_node_id,
                             event_seq, created_at, updated_at)
           VALUES ($1, $2, $3, $4, 'RUNNING', $5::jsonb, $6::jsonb, $7, $8, 0, $9, $9)
           ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
           RETURNING id`,
          [tenantId, runId, input.workflowId, version, jsonb(runInput), jsonb(runConfig), input.idempotencyKey ?? null, input.startNodeId ?? null, now],
        );
        if (ins.rowCount === 0) {
          // A concurrent start with the same key committed first: return the winner.
          const winner = await this.findByIdempotencyKey(m, tenantId, input.idempotencyKey!);
          if (!winner) throw new TransientDbError(undefined, 'idempotency key owner vanished; retrying');
          return { runId: winner, created: false as const };
        }
        const run: RunRow = {
          id: runId,
          workflow_id: input.workflowId,
          version,
          status: RunStatus.Running,
          input: runInput,
          config: runConfig,
          event_seq: 0,
          parent_run_id: null,
          parent_task_id: null,
          parent_attempt: null,
          depth: 0,
          root_run_id: null,
        };
        const ev: RunEvent = input.startNodeId ? { type: 'RunStarted', startNodeId: input.startNodeId } : { type: 'RunStarted' };
        const applied = await this.applyLocked(m, tenantId, run, new Map(), dag, ev, now, { rejectedRollsBack: true });
        return { runId, created: true as const, applied };
      }),
    ).catch((err: unknown) => {
      // A rejected start rolled back with its run row: nothing to publish.
      throw userError(err, 'the run');
    });
    if ('applied' in res && res.applied) await this.afterCommit(tenantId, res.runId, res.applied);
    return { runId: res.runId, created: res.created };
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
   * Fencing (issue 4): a report carrying a `leaseToken` for the task's current, still active
   * attempt is ignored when the token is not the task's current `lease_token` — the attempt was
   * re-dispatched (lease sweep, Bull's stalled-job redelivery) and claimed by another execution,
   * or revoked by the sweep. It is recorded in the history with `ignored` = `stale lease: attempt
   * N of node X was re-dispatched; this execution's lease was superseded` (N 0-based).
   * @throws WeftError TRANSIENT; the database's error if even that NodeFailed cannot be stored.
   */
  async reportCompleted(tenantId: string, r: ReportCompletedInput): Promise<ReportResult> {
    const bad = jsonProblem(r.output, this.maxOutputBytes);
    if (bad) return this.reportFailed(tenantId, { ...r, error: describeJsonProblem('output', bad, 'OUTPUT_TOO_LARGE') });
    return this.report(
      tenantId,
      r.runId,
      {
        type: 'NodeCompleted',
        taskId: reportField(r.taskId),
        nodeId: reportField(r.nodeId),
        attempt: r.attempt,
        output: r.output,
      },
      r.leaseToken,
      r.takeFrom,
    );
  }

  /**
   * A worker's NodeFailed; see {@link RunCoordinator.reportCompleted} for ignored reports. The
   * error text is stored sanitized: NUL characters and lone surrogates become U+FFFD, and text
   * beyond 8 KiB is cut.
   */
  async reportFailed(tenantId: string, r: ReportFailedInput): Promise<ReportResult> {
    return this.report(
      tenantId,
      r.runId,
      {
        type: 'NodeFailed',
        taskId: reportField(r.taskId),
        nodeId: reportField(r.nodeId),
        attempt: r.attempt,
        error: sanitizeText(typeof r.error === 'string' ? r.error : String(r.error), MAX_ERROR_CHARS),
        ...(r.retryable === undefined ? {} : { retryable: r.retryable !== false }),
      },
      r.leaseToken,
      r.takeFrom,
    );
  }

  /**
   * TimerFired for a WAITING task. A timer the machine ignores (task no longer waiting, run
   * finished) has its `wake_at` cleared so it is never claimed again. When the database refuses a
   * value the event would write (a WAIT's successor input computed by a template), the waiting
   * task and the run fail with the reason instead, so the timer never fires again.
   */
  async fireTimer(tenantId: string, t: FireTimerInput): Promise<ReportResult> {
    return this.report(tenantId, t.runId, { type: 'TimerFired', taskId: reportField(t.taskId), nodeId: reportField(t.nodeId) });
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
    this.checkName('name', s.name);
    this.checkJson('payload', s.payload);
    const applied = await this.command(tenantId, s.runId, 'the signal', () => ({
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
    this.checkName('reason', c.reason, MAX_ERROR_CHARS);
    await this.command(tenantId, c.runId, 'the cancellation', () => ({ ev: c.reason === undefined ? { type: 'RunCancelled' } : { type: 'RunCancelled', reason: c.reason } }));
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
   * active; a child run, naming its parent run and the parent's node to retry), TRANSIENT.
   */
  async retryRun(tenantId: string, r: RetryRunInput): Promise<void> {
    if (!isVersion(r.version)) throw new WeftError('NOT_FOUND', `version ${r.version} not found`);
    this.checkName('fromNodeId', r.fromNodeId);
    this.checkJson('input', r.input);
    this.checkJson('config', r.config);
    await this.refuseChildRetry(tenantId, r.runId);
    if (r.version !== undefined) await this.refuseDeprecatedRetry(tenantId, r.runId, r.version);
    await this.command(tenantId, r.runId, 'the retry', (run) => {
      const version = r.version ?? run.version;
      const ev: RunEvent = { type: 'RunRetried', fromNodeId: r.fromNodeId, version };
      if (r.input !== undefined) ev.input = r.input;
      if (r.config !== undefined) ev.config = r.config;
      return { ev, version };
    });
  }

  /**
   * A worker picked up the job of (`taskId`, `attempt`) and claims its lease (issue 4): in one
   * fenced UPDATE (no event, no history) the task becomes RUNNING with a fresh random
   * `lease_token` (UUIDv4) and `lease_expires_at` = the database's now + `runLeaseMs`. Returns the
   * token, which the worker sends with its heartbeats and its report; null when the worker must
   * drop the job (unknown task, another attempt, finished or cancelled, malformed ids).
   *
   * A claim of an attempt that is already RUNNING (Bull redelivered a stalled job, the lease
   * sweep re-dispatched it) succeeds and supersedes the previous execution's lease: that
   * execution learns it at its next heartbeat, and its report is ignored as stale.
   * @throws WeftError TRANSIENT when the database stays unavailable.
   */
  async markRunning(tenantId: string, taskId: string, attempt: number): Promise<string | null> {
    if (!isUuid(tenantId) || !isUuid(taskId) || !isAttempt(attempt)) return null;
    const token = uuidv4();
    // One round trip (the claim is on every task's critical path): the ids are checked above
    // and the token is ours, so the values can be written inline.
    return this.retrying('markRunning', async () => {
      const r = await withTenantStatement(
        this.ds,
        tenantId,
        `WITH c AS (SELECT COALESCE(${sqlLiteral(this.testNow())}::timestamptz, clock_timestamp()) AS now)
         UPDATE tasks SET status = 'RUNNING', updated_at = c.now, lease_token = ${sqlLiteral(token)},
                lease_expires_at = c.now + ${sqlLiteral(this.runLeaseMs)} * interval '1 millisecond'
           FROM c
          WHERE tenant_id = ${sqlLiteral(tenantId)} AND id = ${sqlLiteral(taskId)} AND attempt = ${sqlLiteral(attempt)}
            AND status IN ('PENDING', 'QUEUED', 'RUNNING')`,
      );
      return r.rowCount === 1 ? token : null;
    });
  }

  /**
   * A worker's heartbeat over the leases it holds (executing or still reporting), across
   * tenants: one UPDATE per tenant extends each lease whose task is still RUNNING at that attempt
   * with that token to the database's now + `runLeaseMs`. Returns the lease tokens of the leases
   * it lost — superseded by another claim, re-dispatched, task finished, cancelled or reset, or
   * malformed — whose executions the worker aborts and does not report.
   * @throws WeftError TRANSIENT when the database stays unavailable (the worker keeps its leases
   * and tries again at the next beat).
   */
  async heartbeat(leases: readonly HeldLease[]): Promise<Set<string>> {
    const lost = new Set(leases.map((l) => l.leaseToken));
    const valid = leases.filter((l) => isUuid(l.tenantId) && isUuid(l.taskId) && isAttempt(l.attempt) && isUuid(l.leaseToken));
    for (const [tenantId, group] of byTenant(valid)) {
      const rows = JSON.stringify(group.map((l) => ({ task_id: l.taskId, attempt: l.attempt, token: l.leaseToken })));
      const r = await this.retrying('heartbeat', () =>
        withTenant(this.ds, tenantId, (m) =>
          sql<{ token: string }>(
            m,
            `UPDATE tasks t SET lease_expires_at = COALESCE($3::timestamptz, clock_timestamp()) + $4 * interval '1 millisecond'
               FROM jsonb_to_recordset($2::jsonb) AS q(task_id uuid, attempt int, token uuid)
              WHERE t.tenant_id = $1 AND t.id = q.task_id AND t.attempt = q.attempt AND t.lease_token = q.token
                AND t.status = 'RUNNING'
             RETURNING q.token::text AS token`,
            [tenantId, rows, this.testNow(), this.runLeaseMs],
          ),
        ),
      );
      const held = new Set(r.rows.map((row) => row.token));
      for (const l of group) if (held.has(l.leaseToken.toLowerCase())) lost.delete(l.leaseToken);
    }
    return lost;
  }

  // ---------------------------------------------------------------------------------------------
  // Scheduler entry points

  /**
   * Fires up to `limit` due timers across tenants and returns how many it fired. Claims them in
   * one short transaction (`FOR UPDATE SKIP LOCKED`, moving `wake_at` a lease ahead so another
   * scheduler replica skips them), then applies TimerFired per task in its tenant's transaction.
   * A timer whose event fails transiently is logged and fires again when the lease ends; one
   * fired twice (lease expired mid-way) is ignored by fencing. "Due" is by the database's clock.
   */
  async fireDueTimers(limit: number): Promise<number> {
    const claimed = await claimDueTimers(this.ds, this.testNow(), limit, this.timerLeaseMs);
    let fired = 0;
    for (const t of claimed) {
      try {
        await this.fireTimer(t.tenantId, { runId: t.runId, taskId: t.taskId, nodeId: t.nodeId });
        fired++;
      } catch (err) {
        this.log.error(`timer of task ${t.taskId} (run ${t.runId}) not fired: ${message(err)}`);
      }
    }
    return fired;
  }

  /**
   * Enqueues up to `limit` outbox rows that were committed but never enqueued (a crash between
   * commit and enqueue, Redis down) once they are older than the grace period; returns how many
   * jobs it enqueued. Rows are claimed across tenants through the `weft_claim_outbox` function
   * (`FOR UPDATE SKIP LOCKED`, and a lease), then handled tenant by tenant inside the tenant's
   * transaction: jobs built from the task rows; rows whose task moved on (another attempt, finished, cancelled, deleted)
   * are marked done without a job. Idempotent: the job id is `taskId:attempt`. Ages are by the
   * database's clock.
   */
  async relayOutbox(limit: number): Promise<number> {
    const claimed = await claimOutbox(this.ds, { now: this.testNow(), graceMs: this.outboxGraceMs, leaseMs: this.outboxLeaseMs, limit });
    let enqueued = 0;
    for (const [tenantId, rows] of byTenant(claimed)) {
      try {
        enqueued += await this.relayTenantOutbox(tenantId, rows);
      } catch (err) {
        this.log.warn(`outbox relay of tenant ${tenantId} failed for ${rows.length} row(s), retrying after the lease: ${message(err)}`);
      }
    }
    return enqueued;
  }

  /** Enqueues one tenant's claimed outbox rows whose task still waits for that attempt; marks them all done. */
  private async relayTenantOutbox(tenantId: string, rows: readonly ClaimedOutboxRow[]): Promise<number> {
    const { jobs: found, now } = await this.outboxJobs(tenantId, rows);
    const jobs: TaskJob[] = [];
    const live: { id: string; attempt: number }[] = [];
    const stale: { id: string; attempt: number }[] = [];
    for (const r of rows) {
      const row = found.get(r.outboxId);
      const current = row !== undefined && row.task_attempt === r.attempt && (row.status === 'PENDING' || row.status === 'QUEUED');
      if (!current) {
        stale.push({ id: r.outboxId, attempt: r.attempt });
        continue;
      }
      live.push({ id: r.outboxId, attempt: r.attempt });
      jobs.push(jobOfRow(row));
    }
    let done = stale;
    if (jobs.length) {
      try {
        await this.dispatcher.enqueue(jobs, now);
        done = [...stale, ...live];
      } catch (err) {
        this.log.warn(`outbox relay could not enqueue ${jobs.length} job(s), retrying after the lease: ${message(err)}`);
        jobs.length = 0;
      }
    }
    if (done.length) {
      await withTenant(this.ds, tenantId, (m) =>
        sql(
          m,
          `UPDATE outbox o SET enqueued_at = COALESCE($2::timestamptz, clock_timestamp())
             FROM jsonb_to_recordset($3::jsonb) AS d(id bigint, attempt int)
            WHERE o.tenant_id = $1 AND o.id = d.id AND o.attempt = d.attempt AND o.enqueued_at IS NULL`,
          [tenantId, this.testNow(), JSON.stringify(done)],
        ),
      ).catch((err) => this.log.warn(`outbox rows enqueued but not marked (will be relayed again, harmlessly): ${message(err)}`));
    }
    return jobs.length;
  }

  /**
   * The jobs of one tenant's claimed outbox rows, read inside the tenant's transaction, by outbox
   * id: each with its task's current status and attempt (a row whose task is gone is absent);
   * and the clock reading of that transaction (for the jobs' delays).
   */
  private async outboxJobs(
    tenantId: string,
    rows: readonly ClaimedOutboxRow[],
  ): Promise<{ jobs: Map<string, JobRow & { status: TaskStatus; task_attempt: number }>; now: Date }> {
    return this.retrying('outboxJobs', () =>
      withTenant(this.ds, tenantId, async (m) => {
        const now = await this.clock(m);
        const r = await sql<JobRow & { outbox_id: string; status: TaskStatus; task_attempt: number }>(
          m,
          `SELECT o.id AS outbox_id, o.tenant_id, o.run_id, o.task_id, o.attempt, o.queue, o.not_before,
                  t.node_id, t.node_type, t.runtime, t.status, t.attempt AS task_attempt, t.input, r.workflow_id, r.version
             FROM outbox o
             JOIN tasks t ON t.tenant_id = o.tenant_id AND t.id = o.task_id
             JOIN runs r ON r.tenant_id = t.tenant_id AND r.id = t.run_id
            WHERE o.tenant_id = $1 AND o.id = ANY($2::bigint[])`,
          [tenantId, rows.map((x) => x.outboxId)],
        );
        await this.markSensitive(m, tenantId, r.rows);
        return { jobs: new Map(r.rows.map((row) => [String(row.outbox_id), row])), now };
      }),
    );
  }

  /**
   * The lease sweep (issue 4, DESIGN §4): re-dispatches up to `limit` worker tasks whose lease
   * expired and whose Bull job is not live — Redis flushed or restarted empty, a job Bull failed
   * and removed after its worker died more often than `maxStalledCount`, a job a worker dropped —
   * and returns how many it re-enqueued.
   *
   * Candidates, across tenants, earliest expiry first: PENDING, QUEUED or RUNNING tasks with a
   * queue whose `lease_expires_at` passed by the database's clock (a dispatched attempt: its
   * `not_before` + `dispatchLeaseMs`; a claimed one: the last heartbeat + `runLeaseMs`). They are
   * claimed through the `weft_claim_lost_tasks` function (`FOR UPDATE SKIP LOCKED`), which moves
   * their lease `dispatchLeaseMs` ahead, hiding them from other scheduler replicas. Then, per
   * tenant, each task is read back in the tenant's transaction and its job probed:
   *
   * - live (waiting, delayed, active — e.g. a worker holding it whose heartbeats cannot reach the
   *   database, or a backlog): nothing more; the pushed lease means it is probed again only after
   *   `dispatchLeaseMs`. A live job still delayed although the attempt is due by the database's
   *   clock is promoted (another process's clock measured its delay);
   * - not live: enqueued again under the same job id `taskId:attempt` (a concurrent duplicate is
   *   a no-op), its outbox row marked enqueued, and a RUNNING task's `lease_token` cleared unless
   *   a new claim already replaced it — the previous execution's lease is revoked, so its late
   *   report is ignored as stale. A RUNNING
   *   task re-dispatched is executed again (at least once; the lease token fences its reports).
   *
   * A probe or enqueue failure is logged and tried again after `dispatchLeaseMs`.
   */
  async sweepLostTasks(limit: number, probe: JobProbe): Promise<number> {
    const claimed = await claimLostTasks(this.ds, { now: this.testNow(), limit, leaseMs: this.dispatchLeaseMs });
    let redispatched = 0;
    for (const [tenantId, claims] of byTenant(claimed)) {
      try {
        redispatched += await this.sweepTenant(tenantId, claims, probe);
      } catch (err) {
        this.log.warn(`lease sweep of tenant ${tenantId} failed for ${claims.length} task(s), retrying after ${this.dispatchLeaseMs} ms: ${message(err)}`);
      }
    }
    return redispatched;
  }

  /** One tenant's part of {@link sweepLostTasks}; returns how many jobs it re-enqueued. */
  private async sweepTenant(tenantId: string, claims: readonly ClaimedLostTask[], probe: JobProbe): Promise<number> {
    const { rows, now } = await this.retrying('sweepLostTasks', () =>
      withTenant(this.ds, tenantId, async (m) => {
        const now = await this.clock(m);
        const r = await sql<JobRow & { status: TaskStatus; lease_token: string | null }>(
          m,
          `SELECT t.tenant_id, t.run_id, t.id AS task_id, t.attempt, t.queue, t.node_id, t.node_type, t.runtime, t.input, t.status,
                  t.lease_token, COALESCE(o.not_before, $3::timestamptz) AS not_before, r.workflow_id, r.version
             FROM tasks t
             JOIN runs r ON r.tenant_id = t.tenant_id AND r.id = t.run_id
             LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
            WHERE t.tenant_id = $1 AND t.id = ANY($2::uuid[])`,
          [tenantId, claims.map((c) => c.taskId), now],
        );
        await this.markSensitive(m, tenantId, r.rows);
        return { rows: r.rows, now };
      }),
    );
    const byId = new Map(rows.map((r) => [r.task_id, r]));
    let redispatched = 0;
    for (const claim of claims) {
      const r = byId.get(claim.taskId);
      if (!r || r.attempt !== claim.attempt || !ACTIVE_WORKER.has(r.status) || !r.queue) continue;
      const id = jobId(r.task_id, r.attempt);
      try {
        if (await probe.hasJob(r.queue, id, { due: r.not_before.getTime() <= now.getTime() })) continue;
        await this.dispatcher.enqueue([jobOfRow(r)], now);
        redispatched++;
        this.log.warn(`run ${r.run_id}: lease of ${r.status} task ${r.node_id} (job ${id}) expired and its job is gone from queue ${r.queue}; re-dispatched`);
      } catch (err) {
        this.log.warn(`run ${r.run_id}: job ${id} not checked or re-dispatched, retrying after ${this.dispatchLeaseMs} ms: ${message(err)}`);
        continue;
      }
      await this.retrying('sweepLostTasks', () =>
        withTenant(this.ds, tenantId, (m) =>
          sql(
            m,
            `WITH revoked AS (
               UPDATE tasks SET lease_token = NULL
                WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'RUNNING' AND lease_token = $5
             )
             UPDATE outbox SET enqueued_at = COALESCE($4::timestamptz, clock_timestamp())
              WHERE tenant_id = $1 AND task_id = $2 AND attempt = $3 AND enqueued_at IS NULL`,
            [tenantId, r.task_id, r.attempt, this.testNow(), r.lease_token],
          ),
        ),
      ).catch((err) => this.log.warn(`run ${r.run_id}: job ${id} re-dispatched but its lease not revoked: ${message(err)}`));
    }
    return redispatched;
  }

  // ---------------------------------------------------------------------------------------------
  // The event pipeline

  /**
   * Applies a worker/scheduler event; unknown runs and machine rejections are reported as ignored.
   * An event the database refuses to store ({@link isInvalidDataError}) is applied once more as
   * its failure: a NodeFailed of the same attempt, or, for a timer, the failure of the waiting
   * task and the run — so a run never stays RUNNING on a report that can never be written.
   * `leaseToken` fences a worker's report (see {@link RunCoordinator.reportCompleted}).
   */
  private async report(tenantId: string, runId: string, ev: RunEvent, leaseToken?: string, takeFrom?: string): Promise<ReportResult> {
    if (!isUuid(tenantId) || !isUuid(runId)) return { ignored: RUN_NOT_FOUND };
    if ('attempt' in ev && !isAttempt(ev.attempt)) return { ignored: `invalid attempt ${String(ev.attempt)}` };
    let applied: Applied | undefined;
    try {
      applied = await this.applyToRun(tenantId, runId, () => ({ ev }), { rejectedRollsBack: false, leaseToken, takeFrom, taskId: reportedTask(ev) });
    } catch (err) {
      if (!isInvalidDataError(err) || (ev.type !== 'NodeCompleted' && ev.type !== 'NodeFailed' && ev.type !== 'TimerFired')) throw err;
      const reason = sanitizeText(`could not store the ${ev.type} of node ${ev.nodeId}: ${message(err)} (INVALID_DATA)`);
      this.log.warn(`run ${runId}: ${reason}; applying it as a failure`);
      if (ev.type === 'TimerFired') {
        applied = await this.failWait(tenantId, runId, ev, reason);
      } else {
        const failed: NodeFailed = { type: 'NodeFailed', taskId: ev.taskId, nodeId: ev.nodeId, attempt: ev.attempt, error: reason };
        if (ev.type === 'NodeFailed' && ev.retryable === false) failed.retryable = false;
        applied = await this.applyToRun(tenantId, runId, () => ({ ev: failed }), { rejectedRollsBack: false, leaseToken, takeFrom, taskId: reportedTask(failed) });
      }
    }
    if (!applied) return { ignored: RUN_NOT_FOUND };
    await this.afterCommit(tenantId, runId, applied);
    if (applied.ignored !== undefined) return { ignored: applied.ignored };
    if (applied.rejected) return { ignored: applied.rejected.message };
    if (applied.transition?.ignored !== undefined) return { ignored: applied.transition.ignored };
    return applied.taken ? { taken: applied.taken } : {};
  }

  /**
   * Applies a user command; unknown runs and rejections become WeftErrors. A rejected command
   * rolls back and writes nothing (no history row), so refused commands cannot grow a run's
   * history; a value the database refuses becomes BAD_USER_INPUT.
   */
  private async command(
    tenantId: string,
    runId: string,
    what: string,
    build: (run: RunRow) => { ev: RunEvent; version?: number },
  ): Promise<Applied> {
    if (!isUuid(tenantId) || !isUuid(runId)) throw new WeftError('NOT_FOUND', `run ${runId} not found`);
    let applied: Applied | undefined;
    try {
      applied = await this.applyToRun(tenantId, runId, build, { rejectedRollsBack: true });
    } catch (err) {
      throw userError(err, what);
    }
    if (!applied) throw new WeftError('NOT_FOUND', `run ${runId} not found`);
    await this.afterCommit(tenantId, runId, applied);
    return applied;
  }

  /**
   * The last resort for a TimerFired the database refused: in one transaction, the waiting task
   * (if it is still waiting) and the run (if not finished) fail with `reason`, like a permanent
   * routing error fails the run in the machine; the history row carries the timer and the reason.
   */
  private async failWait(tenantId: string, runId: string, ev: TimerFired, reason: string): Promise<Applied | undefined> {
    return this.retrying('event', () =>
      withTenant(this.ds, tenantId, async (m) => {
        const run = (await sql<RunRow>(m, `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, runId])).rows[0];
        if (!run) return undefined;
        const waiting = isUuid(ev.taskId)
          ? (await sql(m, `SELECT 1 FROM tasks WHERE tenant_id = $1 AND id = $2 AND run_id = $3 AND status = 'WAITING'`, [tenantId, ev.taskId, runId])).rowCount === 1
          : false;
        const actions: Action[] = [];
        if (waiting) actions.push({ type: 'ResolveWait', taskId: ev.taskId, nodeId: ev.nodeId, status: TaskStatus.Failed, reason });
        const finished = run.status !== RunStatus.Running;
        if (!finished) actions.push({ type: 'FinishRun', status: RunStatus.Failed, reason });
        const now = await this.clock(m);
        const dag = await this.dag(m, tenantId, run.workflow_id, run.version);
        const written = await new ActionWriter(m, tenantId, runId, now, dag, this.dispatchLeaseMs).write(actions);
        const seq = run.event_seq + 1;
        const ignored = actions.length === 0 ? 'timer no longer pending' : undefined;
        await this.appendHistory(m, tenantId, runId, { seq, ev, now, actions: actions.map(summarizeAction), ignored, error: reason, patch: written.run });
        return { status: finished ? run.status : RunStatus.Failed, seq, jobs: [], now } satisfies Applied;
      }),
    );
  }

  /**
   * One event on an existing run, in its own tenant transaction, retried when transient.
   * Returns undefined when the tenant has no such run. The event's clock reading is the
   * database's `clock_timestamp()` taken after the run lock (or the test clock). A worker report
   * with a `leaseToken` that is not its current, active attempt's token is recorded as ignored
   * without reaching the machine.
   */
  private async applyToRun(
    tenantId: string,
    runId: string,
    build: (run: RunRow) => { ev: RunEvent; version?: number },
    opts: { rejectedRollsBack: boolean; leaseToken?: string; takeFrom?: string; taskId?: string | null },
  ): Promise<Applied | undefined> {
    return this.retrying('event', () =>
      withTenant(this.ds, tenantId, async (m) => {
        // One round trip: lock the run row, then the reported task's row (its CTE reads the run's
        // first, so the locks are always taken run before task), then read the clock. The task
        // row is read by locking it: a plain read would see the statement's snapshot, taken
        // before any wait for the run lock, and miss a claim or a lease revocation committed
        // meanwhile; a locked row is its latest committed version.
        const locked = await sql<{ run: RunRow; db_now: Date } & TaskStateRow>(
          m,
          `WITH r AS MATERIALIZED (SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE),
                t AS MATERIALIZED (SELECT ${TASK_STATE_COLUMNS} FROM tasks t
                                    WHERE t.tenant_id = $1 AND t.id = $3::uuid AND t.run_id = $2 AND EXISTS (SELECT 1 FROM r)
                                    FOR NO KEY UPDATE)
           SELECT to_jsonb(r) AS run, clock_timestamp() AS db_now, t.*
             FROM r LEFT JOIN t ON true`,
          [tenantId, runId, opts.taskId ?? null],
        );
        const first = locked.rows[0];
        if (!first) return undefined;
        const run = first.run;
        const { ev, version } = build(run);
        // The node states: those this process left after the run's previous event when nothing
        // else has applied one since (same event_seq, checked under the row lock) — then the
        // reported task's row read with the lock is all that is needed — else every task row,
        // read now (a statement after the lock, so it sees every event committed before it).
        const reported = reportedTask(ev);
        const cached = reported === null || reported === first.id ? this.snapshots.take(tenantId, runId, run.event_seq) : undefined;
        const read = cached
          ? { rows: first.id === null ? [] : [first] }
          : await sql<TaskStateRow>(m, `SELECT ${TASK_STATE_COLUMNS} FROM tasks t WHERE t.tenant_id = $1 AND t.run_id = $2`, [tenantId, runId]);
        const now = this.testClock?.() ?? first.db_now;
        const rows = read.rows;
        const stale = opts.leaseToken === undefined ? undefined : staleLease(ev, rows, opts.leaseToken);
        if (stale !== undefined) {
          const seq = run.event_seq + 1;
          await this.appendHistory(m, tenantId, run.id, { seq, ev, now, actions: [], ignored: stale, patch: {} });
          return { ignored: stale, status: run.status, seq, jobs: [], now, ...(cached ? { nodes: cached } : {}) } satisfies Applied;
        }
        const nodes = cached ?? snapshotNodes(rows);
        const dag = await this.dag(m, tenantId, run.workflow_id, version ?? run.version);
        const applied = await this.applyLocked(m, tenantId, run, nodes, dag, ev, now, opts);
        if (ev.type === 'TimerFired' && applied.transition?.ignored !== undefined && isUuid(ev.taskId)) {
          // A timer nobody will act on again must not be claimed again after its lease; one that
          // came too early for a retry is set again for the retry's due time.
          await sql(m, `UPDATE tasks SET wake_at = $3 WHERE tenant_id = $1 AND id = $2 AND status = 'WAITING'`, [
            tenantId,
            ev.taskId,
            applied.transition.rearmAt ?? null,
          ]);
        }
        return applied;
      }),
    ).then((applied) => {
      // Committed: the node states now match the database at the new event_seq.
      if (applied?.nodes) this.snapshots.put(tenantId, runId, applied.seq, applied.nodes);
      return applied;
    });
  }

  /**
   * The heart of an event, on a run row this transaction locked (or just inserted): builds the
   * snapshot, applies the machine, persists the actions and the history record.
   * A machine rejection either rolls back (`rejectedRollsBack`, for user commands: the MachineError
   * is thrown) or, for worker/scheduler reports, is recorded in the history (`error`) and
   * returned as `rejected`.
   */
  private async applyLocked(
    m: EntityManager,
    tenantId: string,
    run: RunRow,
    nodes: Map<string, NodeState>,
    dag: WorkflowDag,
    ev: RunEvent,
    now: Date,
    opts: { rejectedRollsBack: boolean; nesting?: number; takeFrom?: string },
  ): Promise<Applied> {
    const snapshot: RunSnapshot = {
      id: run.id,
      workflowId: run.workflow_id,
      version: run.version,
      status: run.status,
      context: { input: run.input, config: run.config, tasks: new Map() },
      nodes,
      depth: run.depth,
    };
    const deps: Deps = {
      templates: this.templates,
      store: new PgRunStore(m, tenantId, run.id, run.root_run_id ?? run.id),
      now: () => now,
      newId: this.newId,
      maxSubworkflowDepth: this.maxSubworkflowDepth,
      maxRunTree: this.maxRunTree,
      // A value the machine computes may embed a whole task output: allow at least that much.
      maxValueBytes: Math.max(DEFAULT_MAX_VALUE_BYTES, this.maxOutputBytes),
    };
    const seq = run.event_seq + 1;

    let transition: Transition;
    try {
      transition = await new Machine(dag, snapshot, deps).apply(ev);
    } catch (err) {
      if (!(err instanceof MachineError) || opts.rejectedRollsBack) throw err;
      await this.appendHistory(m, tenantId, run.id, { seq, ev: historyEvent(ev, dag, nodes), now, actions: [], error: err.message, patch: {} });
      return { rejected: err, status: run.status, seq, jobs: [], now };
    }

    // A signal no node waits for is buffered only within the run's caps (the run row is locked).
    await refuseOverfullSignalBuffer(m, tenantId, run.id, transition.actions, this.signalCaps);
    const take = opts.takeFrom === undefined ? undefined : { queue: opts.takeFrom, leaseToken: uuidv4(), leaseMs: this.runLeaseMs };
    // The history row and the run update go in the same statement as the actions' last writes.
    const written = await new ActionWriter(m, tenantId, run.id, now, dag, this.dispatchLeaseMs, take).write(transition.actions, (w) =>
      historyParts(tenantId, run.id, { seq, ev: historyEvent(ev, dag, nodes), now, actions: transition.actions.map(summarizeAction), ignored: transition.ignored, patch: w.run }),
    );
    const applied: Applied = { transition, status: snapshot.status, seq, jobs: written.jobs, now, nodes, ...(written.taken ? { taken: written.taken } : {}) };
    await this.linkedRuns(m, tenantId, run, transition.actions, written.children, applied, opts.nesting ?? 0);
    return applied;
  }

  /**
   * The effects of one applied transition on other runs of the tenant, in the same transaction
   * (DESIGN §6 SUBWORKFLOW): each StartChildRun creates its child run and, unless this run was
   * itself started by this transaction (`nesting` > 0), applies its RunStarted — so one
   * transaction starts one level of children, never a whole recursive tree;
   * a run that is cancelled, or ends without succeeding, cancels its running children; a child
   * run that ends wakes its parent's waiting SUBWORKFLOW task (its `wake_at` becomes now, so a
   * lost fast path is still fired by the scheduler). Locks go parent before child; a child ending
   * while its parent is cancelled may deadlock, which PostgreSQL breaks and the event retries.
   */
  private async linkedRuns(
    m: EntityManager,
    tenantId: string,
    run: RunRow,
    actions: readonly Action[],
    children: readonly StartChildRun[],
    applied: Applied,
    nesting: number,
  ): Promise<void> {
    for (const c of children) await this.startChild(m, tenantId, run, c, applied, nesting);
    const finish = actions.find((a): a is FinishRun => a.type === 'FinishRun');
    if (actions.some((a) => a.type === 'CancelTasks') || (finish !== undefined && finish.status !== RunStatus.Succeeded)) {
      const status = finish?.status === RunStatus.Failed ? 'failed' : 'was cancelled';
      await this.cancelChildren(m, tenantId, run.id, `parent run ${run.id} ${status}`, applied);
    }
    if (finish !== undefined) await this.wakeParent(m, tenantId, run, applied);
  }

  /**
   * Creates the child run of a StartChildRun (same tenant, `depth` + 1, linked to the parent's
   * task attempt and to the top of its tree) unless it exists, and applies its RunStarted — or,
   * when `nesting` > 0 (the parent run was itself started in this transaction), leaves it created
   * but not started and makes the parent's task due now, so the child starts in the parent's next
   * event (after commit, or from the scheduler). A child whose start the machine rejects (its
   * entry node cannot be routed) is recorded FAILED with the reason, and its parent is woken.
   */
  private async startChild(m: EntityManager, tenantId: string, parent: RunRow, c: StartChildRun, applied: Applied, nesting: number): Promise<void> {
    const now = applied.now;
    const child: RunRow = {
      id: c.childRunId,
      workflow_id: c.workflowId,
      version: c.version,
      status: RunStatus.Running,
      input: c.input,
      config: c.config,
      event_seq: 0,
      parent_run_id: parent.id,
      parent_task_id: c.taskId,
      parent_attempt: c.attempt,
      depth: parent.depth + 1,
      root_run_id: parent.root_run_id ?? parent.id,
    };
    await sql(
      m,
      `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, parent_run_id, parent_task_id, parent_attempt, depth,
                         root_run_id, event_seq, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'RUNNING', $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, 0, $12, $12)
       ON CONFLICT (tenant_id, id) DO NOTHING`,
      [tenantId, child.id, child.workflow_id, child.version, jsonb(child.input), jsonb(child.config), parent.id, c.taskId, c.attempt, child.depth, child.root_run_id, now],
    );
    if (nesting > 0) {
      const r = await sql(
        m,
        `UPDATE tasks SET wake_at = $4, updated_at = $4 WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'WAITING'`,
        [tenantId, c.taskId, c.attempt, now],
      );
      if (r.rowCount === 1) (applied.wakes ??= []).push({ runId: parent.id, taskId: c.taskId, nodeId: c.nodeId });
      return;
    }
    const locked = await sql<RunRow>(m, `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, child.id]);
    const row = locked.rows[0];
    if (!row || row.event_seq > 0 || row.status !== RunStatus.Running) return; // started (or ended) already
    const dag = await this.dag(m, tenantId, row.workflow_id, row.version);
    const started = await this.applyLocked(m, tenantId, row, new Map(), dag, { type: 'RunStarted' }, now, { rejectedRollsBack: false, nesting: nesting + 1 });
    if (started.rejected) {
      const reason = `the child run could not start: ${started.rejected.message}`;
      await sql(m, `UPDATE runs SET status = 'FAILED', error = $3, finished_at = $4, updated_at = $4 WHERE tenant_id = $1 AND id = $2`, [tenantId, row.id, reason, now]);
      started.status = RunStatus.Failed;
      await this.wakeParent(m, tenantId, row, started);
    }
    (applied.nested ??= []).push({ runId: row.id, applied: started });
  }

  /** Applies RunCancelled with `reason` to every RUNNING child run of `runId` (and so to theirs). */
  private async cancelChildren(m: EntityManager, tenantId: string, runId: string, reason: string, applied: Applied): Promise<void> {
    const kids = await sql<RunRow>(
      m,
      `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = $1 AND parent_run_id = $2 AND status = 'RUNNING' ORDER BY created_at, id FOR UPDATE`,
      [tenantId, runId],
    );
    for (const kid of kids.rows) {
      const tasks = await sql<TaskStateRow>(m, `SELECT ${TASK_STATE_COLUMNS} FROM tasks t WHERE t.tenant_id = $1 AND t.run_id = $2`, [tenantId, kid.id]);
      const dag = await this.dag(m, tenantId, kid.workflow_id, kid.version);
      const cancelled = await this.applyLocked(m, tenantId, kid, snapshotNodes(tasks.rows), dag, { type: 'RunCancelled', reason }, applied.now, { rejectedRollsBack: false });
      (applied.nested ??= []).push({ runId: kid.id, applied: cancelled });
    }
  }

  /** A child run ended: its parent's SUBWORKFLOW task, if still waiting on this attempt, is due now. */
  private async wakeParent(m: EntityManager, tenantId: string, run: RunRow, applied: Applied): Promise<void> {
    if (run.parent_run_id === null || run.parent_task_id === null) return;
    const r = await sql<{ node_id: string }>(
      m,
      `UPDATE tasks SET wake_at = $5, updated_at = $5
        WHERE tenant_id = $1 AND id = $2 AND run_id = $3 AND attempt = $4 AND status = 'WAITING'
        RETURNING node_id`,
      [tenantId, run.parent_task_id, run.parent_run_id, run.parent_attempt, applied.now],
    );
    const woken = r.rows[0];
    if (woken) (applied.wakes ??= []).push({ runId: run.parent_run_id, taskId: run.parent_task_id, nodeId: woken.node_id });
  }

  /** Inserts the `run_events` row and updates the run (event_seq + the event's patch) in one statement. */
  private async appendHistory(m: EntityManager, tenantId: string, runId: string, entry: HistoryEntry): Promise<void> {
    await runWrites(m, runId, historyParts(tenantId, runId, entry));
  }

  /** After commit: enqueue the jobs (then mark their outbox rows), publish the run update. */
  private async afterCommit(tenantId: string, runId: string, applied: Applied): Promise<void> {
    if (applied.jobs.length) {
      let enqueued = false;
      try {
        await this.dispatcher.enqueue(applied.jobs, applied.now);
        enqueued = true;
      } catch (err) {
        this.log.warn(`run ${runId}: enqueue of ${applied.jobs.map((j) => jobId(j.taskId, j.attempt)).join(', ')} failed, the outbox relay will retry: ${message(err)}`);
      }
      if (enqueued) {
        const rows = applied.jobs.map((j) => ({ task_id: j.taskId, attempt: j.attempt }));
        // One round trip: the task ids and attempts are the ones this process just wrote.
        await withTenantStatement(
          this.ds,
          tenantId,
          `UPDATE outbox o SET enqueued_at = COALESCE(${sqlLiteral(this.testNow())}::timestamptz, clock_timestamp())
             FROM jsonb_to_recordset(${sqlLiteral(JSON.stringify(rows))}::jsonb) AS j(task_id uuid, attempt int)
            WHERE o.tenant_id = ${sqlLiteral(tenantId)} AND o.task_id = ANY(ARRAY[${rows.map((r) => sqlLiteral(r.task_id)).join(', ')}]::uuid[])
              AND o.task_id = j.task_id AND o.attempt = j.attempt AND o.enqueued_at IS NULL`,
        ).catch((err) => this.log.warn(`run ${runId}: jobs enqueued but outbox not marked (the relay re-enqueues harmlessly): ${message(err)}`));
      }
    }
    try {
      await this.publisher.publish({ tenantId, runId, status: applied.status, seq: applied.seq });
    } catch (err) {
      this.log.warn(`run ${runId}: update not published: ${message(err)}`);
    }
    for (const n of applied.nested ?? []) await this.afterCommit(tenantId, n.runId, n.applied);
    // The fast path of a child's end; the parent task's wake_at stays due for the scheduler if it fails.
    for (const w of applied.wakes ?? []) {
      await this.fireTimer(tenantId, w).catch((err: unknown) =>
        this.log.warn(`run ${w.runId}: the end of a child run was not applied at once (the scheduler fires it): ${message(err)}`),
      );
    }
  }

  /** The event clock inside transaction `m`: the test clock, else the database's `clock_timestamp()`. */
  private async clock(m: EntityManager): Promise<Date> {
    if (this.testClock) return this.testClock();
    return (await sql<{ now: Date }>(m, `SELECT clock_timestamp() AS now`, [])).rows[0]!.now;
  }

  /**
   * The test clock's reading as a query parameter, or null in production: statements use
   * `COALESCE($n::timestamptz, clock_timestamp())` (or `now()` in the claim functions).
   */
  private testNow(): Date | null {
    return this.testClock ? this.testClock() : null;
  }

  /** Runs `fn` again after transient failures (bounded, jittered), then throws WeftError TRANSIENT. */
  private async retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!isTransient(err)) throw err;
        if (attempt >= this.maxRetries) {
          throw new WeftError('TRANSIENT', `${what} failed after ${attempt + 1} attempt(s): ${message(err)}`);
        }
        const base = Math.min(200, 5 * 2 ** attempt);
        await new Promise((r) => setTimeout(r, base + Math.random() * base));
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Checks of user input, before any transaction

  /**
   * Throws WeftError BAD_USER_INPUT when the text `value` of `field` is not a string, holds a
   * character the database cannot store, or is longer than `maxChars`; `undefined` passes.
   */
  private checkName(field: string, value: unknown, maxChars = MAX_NAME_CHARS): void {
    if (value === undefined) return;
    let msg: string | undefined;
    if (typeof value !== 'string') msg = `${field} must be a string`;
    else if (badCharacter(value)) msg = `${field} is not storable: ${badCharacter(value)}`;
    else if (value.length > maxChars) msg = `${field} is longer than ${maxChars} characters`;
    if (msg) throw new WeftError('BAD_USER_INPUT', msg, [{ path: field, message: msg }]);
  }

  /**
   * Throws WeftError BAD_USER_INPUT when the JSON `value` of `field` cannot be stored (NUL
   * character or lone surrogate in a string or key, not JSON, too deep) or exceeds
   * `maxInputBytes`; the message and the problem's `path` name the field and the JSON path
   * (`payload is not storable: NUL character at $.a`, path `payload.a`).
   */
  private checkJson(field: string, value: unknown): void {
    if (value === undefined) return;
    const p = jsonProblem(value, this.maxInputBytes);
    if (!p) return;
    const msg = describeJsonProblem(field, p);
    throw new WeftError('BAD_USER_INPUT', msg, [{ path: p.kind === 'unstorable' ? field + p.path.slice(1) : field, message: msg }]);
  }

  // ---------------------------------------------------------------------------------------------
  // Lookups inside the tenant transaction

  private async findByIdempotencyKey(m: EntityManager, tenantId: string, key: string): Promise<string | undefined> {
    const r = await sql<{ id: string }>(m, `SELECT id FROM runs WHERE tenant_id = $1 AND idempotency_key = $2`, [tenantId, key]);
    return r.rows[0]?.id;
  }

  /**
   * A retry that moves run `runId` onto another `version` may not pick a deprecated one (a retry
   * on the run's own version is always allowed: it is no new run). Checked in its own short
   * transaction before the retry; an unknown run or version is left to the retry to report.
   * @throws WeftError BAD_USER_INPUT naming the workflow and version.
   */
  private async refuseDeprecatedRetry(tenantId: string, runId: string, version: number): Promise<void> {
    if (!isUuid(tenantId) || !isUuid(runId)) return;
    const r = await this.retrying('retryRun', () =>
      withTenant(this.ds, tenantId, (m) =>
        sql<{ workflow_id: string; version: number; deprecated: boolean }>(
          m,
          `SELECT r.workflow_id, r.version, v.deprecated_at IS NOT NULL AS deprecated
             FROM runs r JOIN workflow_versions v ON v.tenant_id = r.tenant_id AND v.workflow_id = r.workflow_id AND v.version = $3
            WHERE r.tenant_id = $1 AND r.id = $2`,
          [tenantId, runId, version],
        ),
      ),
    );
    const row = r.rows[0];
    if (!row || !row.deprecated || row.version === version) return;
    const msg = `workflow ${row.workflow_id} version ${version} is deprecated: a retry may not move run ${runId} onto it; retry on the run's own version ${row.version} or another version, or restore version ${version} with deprecateVersion(deprecated: false)`;
    throw new WeftError('BAD_USER_INPUT', msg, [{ path: 'version', message: msg }]);
  }

  /**
   * Sets `sensitive` on job rows read in `m` whose node is `sensitive: true` in their run's version
   * (from the DAG cache); a version that cannot be found counts as sensitive.
   */
  private async markSensitive(m: EntityManager, tenantId: string, rows: JobRow[]): Promise<void> {
    for (const row of rows) {
      const dag = await this.dag(m, tenantId, row.workflow_id, row.version).catch((err: unknown) => {
        if (err instanceof WeftError && err.code === 'NOT_FOUND') return undefined;
        throw err;
      });
      row.sensitive = dag ? isSensitive(dag.getNode(row.node_id)) : true;
    }
  }

  /**
   * Refuses to retry a child run on its own (see {@link RunCoordinator.retryRun}); a run's parent
   * never changes once it is created, so reading it before the retry's transaction is safe.
   * @throws WeftError CONFLICT naming the parent run and its SUBWORKFLOW node.
   */
  private async refuseChildRetry(tenantId: string, runId: string): Promise<void> {
    if (!isUuid(tenantId) || !isUuid(runId)) return;
    const parent = await this.retrying('retry check', () => new RunRepository(this.ds).parentOfRun(tenantId, runId));
    if (!parent) return;
    const { parentRunId, parentNodeId } = parent;
    throw new WeftError(
      'CONFLICT',
      `run ${runId} was started by run ${parentRunId}'s node ${parentNodeId}; retry run ${parentRunId} from node ${parentNodeId} instead`,
    );
  }

  /** The DAG of a version, from the cache or loaded in this transaction. @throws WeftError NOT_FOUND. */
  private async dag(m: EntityManager, tenantId: string, workflowId: string, version: number): Promise<WorkflowDag> {
    const dag = await this.dags.get(tenantId, workflowId, version, async () => {
      const r = await sql<{ definition: WorkflowDefinition }>(
        m,
        `SELECT definition FROM workflow_versions WHERE tenant_id = $1 AND workflow_id = $2 AND version = $3`,
        [tenantId, workflowId, version],
      );
      return r.rows[0]?.definition;
    });
    if (!dag) throw new WeftError('NOT_FOUND', `workflow ${workflowId} version ${version} not found`);
    return dag;
  }
}

/** One event's `run_events` row and the run row's change with it. */
interface HistoryEntry {
  /** The run's event sequence number after the event. */
  seq: number;
  ev: RunEvent;
  now: Date;
  /** The actions' summaries ({@link summarizeAction}). */
  actions: JsonValue[];
  /** Why the event changed nothing, if it did not. */
  ignored?: string;
  /** Why the event was rejected (or applied as a failure). */
  error?: string;
  /** The run row's columns the event changes besides `event_seq` and `updated_at`. */
  patch: RunPatch;
}

/**
 * The history of one event as two writes ({@link WritePart}): the `run_events` row, and the run
 * row's `event_seq` and `updated_at` with the event's `patch` (status, output, …).
 */
function historyParts(tenantId: string, runId: string, { seq, ev, now, actions, ignored, error, patch }: HistoryEntry): WritePart[] {
  const { type, ...payload } = ev;
  const e = ev as { nodeId?: string; attempt?: number };
  const params: unknown[] = [tenantId, runId, seq, now];
  const sets = ['event_seq = $3', 'updated_at = $4'];
  const set = (column: string, value: unknown, cast = '') => {
    params.push(value);
    sets.push(`${column} = $${params.length}${cast}`);
  };
  if (patch.status !== undefined) set('status', patch.status);
  if (patch.version !== undefined) set('version', patch.version);
  if (patch.input !== undefined) set('input', jsonb(patch.input), '::jsonb');
  if (patch.config !== undefined) set('config', jsonb(patch.config), '::jsonb');
  if (patch.output !== undefined) set('output', patch.output === null ? null : jsonb(patch.output), '::jsonb');
  if (patch.error !== undefined) set('error', patch.error);
  if (patch.finishedAt !== undefined) set('finished_at', patch.finishedAt, '::timestamptz');
  return [
    {
      text: `INSERT INTO run_events (tenant_id, run_id, seq, type, at, node_id, attempt, payload, actions, ignored, error)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11)`,
      params: [tenantId, runId, seq, type, now, e.nodeId ?? null, e.attempt ?? null, jsonb(payload), JSON.stringify(actions), ignored ?? null, error ?? null],
    },
    { text: `UPDATE runs SET ${sets.join(', ')} WHERE tenant_id = $1 AND id = $2`, params },
  ];
}

/** The task an event reports on (NodeCompleted, NodeFailed, TimerFired), or null when it names none or no UUID. */
function reportedTask(ev: RunEvent): string | null {
  return 'taskId' in ev && isUuid(ev.taskId) ? ev.taskId : null;
}

/**
 * The machine's Store over the event's transaction: outputs of the requested nodes in one
 * query; the oldest unconsumed signal by name (ids are UUIDv7, so ordering by id is by age). A
 * signal handed out once in this event is not handed out again (its ConsumeSignal is only
 * written after the machine returns).
 */
class PgRunStore implements Store {
  private readonly handedOut: string[] = [];

  constructor(
    private readonly m: EntityManager,
    private readonly tenantId: string,
    private readonly runId: string,
    /** The run at the top of this run's tree (the run itself when it has no parent). */
    private readonly rootId: string,
  ) {}

  async outputs(nodeIds: string[]): Promise<Map<string, JsonValue>> {
    const r = await sql<{ node_id: string; output: JsonValue | null }>(
      this.m,
      `SELECT node_id, output FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($3::text[]) AND iteration IS NULL`,
      [this.tenantId, this.runId, nodeIds],
    );
    return new Map(r.rows.map((row) => [row.node_id, row.output]));
  }

  async iterationOutputs(nodeId: string, maxChars: number): Promise<JsonValue[] | { tooLarge: number }> {
    // Measured in the database first: 10,000 iterations of 1 MiB must not be read to be refused.
    const size = await sql<{ total: string | null }>(
      this.m,
      `SELECT sum(length(output::text)) AS total FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = $3 AND iteration IS NOT NULL`,
      [this.tenantId, this.runId, nodeId],
    );
    const total = Number(size.rows[0]?.total ?? 0);
    if (total > maxChars) return { tooLarge: total };
    const r = await sql<{ output: JsonValue | null }>(
      this.m,
      `SELECT output FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = $3 AND iteration IS NOT NULL ORDER BY iteration`,
      [this.tenantId, this.runId, nodeId],
    );
    return r.rows.map((row) => row.output);
  }

  async taskInput(taskId: string): Promise<JsonValue | undefined> {
    const r = await sql<{ input: JsonValue | null }>(this.m, `SELECT input FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND id = $3`, [
      this.tenantId,
      this.runId,
      taskId,
    ]);
    return r.rows[0] === undefined ? undefined : r.rows[0].input;
  }

  async childRun(taskId: string, attempt: number): Promise<ChildRun | undefined> {
    const r = await sql<{
      id: string;
      status: RunStatus;
      output: JsonValue | null;
      error: string | null;
      event_seq: number;
      workflow_id: string;
      version: number;
      input: JsonValue;
      config: JsonValue;
      failed_node: string | null;
      failed_error: string | null;
    }>(
      this.m,
      `SELECT r.id, r.status, r.output, r.error, r.event_seq, r.workflow_id, r.version, r.input, r.config,
              f.node_id AS failed_node, f.error AS failed_error
         FROM runs r
         LEFT JOIN LATERAL (
           SELECT t.node_id, t.error FROM tasks t
            WHERE t.tenant_id = r.tenant_id AND t.run_id = r.id AND t.status = 'FAILED' AND r.status <> 'SUCCEEDED'
            ORDER BY t.finished_at, t.id LIMIT 1
         ) f ON true
        WHERE r.tenant_id = $1 AND r.parent_run_id = $2 AND r.parent_task_id = $3 AND r.parent_attempt = $4
        ORDER BY r.created_at DESC, r.id DESC LIMIT 1`,
      [this.tenantId, this.runId, taskId, attempt],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const child: ChildRun = {
      id: row.id,
      status: row.status,
      output: row.output,
      error: row.error,
      started: row.event_seq > 0,
      workflowId: row.workflow_id,
      version: row.version,
      input: row.input,
      config: row.config,
    };
    if (row.failed_node !== null) child.failedTask = { nodeId: row.failed_node, error: row.failed_error };
    return child;
  }

  async treeRuns(): Promise<number> {
    // Runs of one tree grow in many transactions at once: counting and creating a child must be
    // serialized per tree, or each would see room for one more. The lock is held until commit;
    // the count is a statement of its own so its snapshot is taken after the lock is granted.
    await sql(this.m, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7355))`, [`weft-run-tree:${this.rootId}`]);
    const r = await sql<{ n: string }>(
      this.m,
      `SELECT count(*) AS n FROM runs WHERE tenant_id = $1 AND (id = $2 OR root_run_id = $2)`,
      [this.tenantId, this.rootId],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  async startableVersion(workflowId: string, version?: number): Promise<{ version: number } | { error: string }> {
    if (workflowId.length > MAX_NAME_CHARS || badCharacter(workflowId)) return { error: `workflow ${JSON.stringify(workflowId.slice(0, 80))} not found` };
    try {
      return { version: await runnableVersion(this.m, this.tenantId, workflowId, version) };
    } catch (err) {
      if (err instanceof WeftError && err.code !== 'TRANSIENT') return { error: err.message };
      throw err;
    }
  }

  async pendingSignal(name: string): Promise<BufferedSignal | undefined> {
    const r = await sql<{ id: string; payload: JsonValue | null }>(
      this.m,
      `SELECT id, payload FROM signals
        WHERE tenant_id = $1 AND run_id = $2 AND name = $3 AND consumed_at IS NULL AND NOT (id = ANY($4::uuid[]))
        ORDER BY id LIMIT 1`,
      [this.tenantId, this.runId, name, this.handedOut],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    this.handedOut.push(row.id);
    return { id: row.id, payload: row.payload };
  }
}

/**
 * The version a new run of `workflowId` runs on: `requested`, or else the workflow's default —
 * its pinned `default_version`, or the latest when none is pinned.
 * @throws WeftError NOT_FOUND (unknown workflow, or no such version); BAD_USER_INPUT when that
 * version is deprecated (the message names the workflow and version and what to do instead).
 */
async function runnableVersion(m: EntityManager, tenantId: string, workflowId: string, requested?: number): Promise<number> {
  const r = await sql<{ latest_version: number; default_version: number | null; version: number | null; deprecated: boolean | null }>(
    m,
    `SELECT w.latest_version, w.default_version, v.version, v.deprecated_at IS NOT NULL AS deprecated
       FROM workflows w
       LEFT JOIN workflow_versions v
         ON v.tenant_id = w.tenant_id AND v.workflow_id = w.id AND v.version = COALESCE($3::int, w.default_version, w.latest_version)
      WHERE w.tenant_id = $1 AND w.id = $2`,
    [tenantId, workflowId, requested ?? null],
  );
  const row = r.rows[0];
  if (!row?.latest_version) throw new WeftError('NOT_FOUND', `workflow ${workflowId} not found`);
  if (row.version === null) throw new WeftError('NOT_FOUND', `workflow ${workflowId} version ${requested} not found`);
  if (row.deprecated) {
    const which =
      requested !== undefined ? '' : row.default_version !== null ? ' (its pinned default version)' : ' (its latest version, the default)';
    const instead =
      requested !== undefined
        ? 'start the run on another version, or restore this one with deprecateVersion(deprecated: false)'
        : row.default_version !== null
          ? 'pin another default with setDefaultVersion, pass a version, or restore this one with deprecateVersion(deprecated: false)'
          : 'publish a new version, pin another default with setDefaultVersion, or pass a version';
    const msg = `workflow ${workflowId} version ${row.version}${which} is deprecated: new runs on it are refused; ${instead}`;
    throw new WeftError('BAD_USER_INPUT', msg, [{ path: 'version', message: msg }]);
  }
  return row.version;
}

/**
 * The node states of a run from its task rows: one per node, with a `for_each` node's iterations
 * (rows with an `iteration`) attached to its aggregate task in element order.
 */
function snapshotNodes(rows: readonly TaskStateRow[]): Map<string, NodeState> {
  const nodes = new Map<string, NodeState>();
  const iterations: TaskStateRow[] = [];
  for (const t of rows) {
    if (t.iteration !== null) {
      iterations.push(t);
      continue;
    }
    const n: NodeState = { taskId: t.id, status: t.status, attempt: t.attempt };
    if (t.branches !== null) n.branches = t.branches;
    if (t.awaited_signal !== null) n.awaitedSignal = t.awaited_signal;
    if (t.error !== null) n.error = t.error;
    if (t.retry_at !== null) n.retryAt = t.retry_at;
    nodes.set(t.node_id, n);
  }
  iterations.sort((a, b) => (a.iteration as number) - (b.iteration as number));
  for (const t of iterations) {
    const agg = nodes.get(t.node_id);
    if (!agg) continue;
    const it: NodeState = { taskId: t.id, status: t.status, attempt: t.attempt };
    if (t.error !== null) it.error = t.error;
    (agg.iterations ??= []).push(it);
  }
  return nodes;
}

/** A 0-based attempt number the `int` columns can hold. */
function isAttempt(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= INT4_MAX;
}

/**
 * Why a worker report carrying `token` is ignored as stale, or undefined when it is not: only a
 * NodeCompleted/NodeFailed for its task's current, active attempt is checked, against the task's
 * `lease_token` (other stale reports are the machine's to ignore, with its own reason).
 */
function staleLease(ev: RunEvent, nodes: readonly TaskStateRow[], token: string): string | undefined {
  if (ev.type !== 'NodeCompleted' && ev.type !== 'NodeFailed') return undefined;
  const task = nodes.find((n) => n.id === ev.taskId);
  if (!task || task.attempt !== ev.attempt || !ACTIVE_WORKER.has(task.status) || task.lease_token === token.toLowerCase()) return undefined;
  return `stale lease: attempt ${ev.attempt} of node ${task.node_id} was re-dispatched; this execution's lease was superseded`;
}

/** An optional workflow version the `int` columns can hold (unknown ones are NOT_FOUND later). */
function isVersion(n: unknown): boolean {
  return n === undefined || (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= INT4_MAX);
}

const INT4_MAX = 2 ** 31 - 1;

/**
 * An id of a worker/scheduler report as it may be stored: a report naming a node or task with
 * characters the database cannot hold matches nothing anyway, and is then ignored (and recorded).
 */
function reportField(s: string): string {
  return typeof s === 'string' ? sanitizeText(s, MAX_NAME_CHARS) : String(s);
}

/** A user command's failure as a client-facing error: machine rejections and refused values. */
function userError(err: unknown, what: string): unknown {
  if (err instanceof MachineError) return toWeftError(err);
  if (isInvalidDataError(err)) return new WeftError('BAD_USER_INPUT', `${what} cannot be stored: ${sanitizeText(err.message, 500)}`);
  return err;
}

/** The columns of an outbox row joined with its task that make a job (relay and lost-task sweep). */
interface JobRow {
  tenant_id: string;
  run_id: string;
  task_id: string;
  attempt: number;
  queue: string;
  not_before: Date;
  node_id: string;
  node_type: string;
  runtime: string | null;
  input: JsonValue | null;
  /** The run's workflow and version, whose DAG says whether the node is sensitive. */
  workflow_id: string;
  version: number;
  /** Set by `markSensitive`. */
  sensitive?: boolean;
}

/**
 * The event as the run history records it (DESIGN §6 payload hygiene): a NodeCompleted's output
 * trimmed by the node's `output_keep` / `output_drop`, or replaced by {@link REDACTED} for a
 * `sensitive` node (whose successors still receive it through the task); a worker report for a
 * `for_each` iteration also carries `iteration`, the element's index (from the node states before the event).
 */
function historyEvent(ev: RunEvent, dag: WorkflowDag, nodes: ReadonlyMap<string, NodeState>): RunEvent {
  if (ev.type !== 'NodeCompleted' && ev.type !== 'NodeFailed') return ev;
  // A for_each iteration's report names the node and the iteration's task: say which element it was.
  const at = nodes.get(ev.nodeId)?.iterations?.findIndex((it) => it.taskId === ev.taskId) ?? -1;
  const tagged = at < 0 ? ev : { ...ev, iteration: at };
  if (ev.type !== 'NodeCompleted') return tagged;
  const node = dag.getNode(ev.nodeId);
  if (isSensitive(node)) return { ...tagged, output: REDACTED } as RunEvent;
  const output = trimOutput(node, ev.output);
  return output === ev.output ? tagged : ({ ...tagged, output } as RunEvent);
}

/** The TaskJob of a task attempt read back from the database (its stored, resolved input). */
function jobOfRow(r: JobRow): TaskJob {
  return {
    tenantId: r.tenant_id,
    runId: r.run_id,
    taskId: r.task_id,
    nodeId: r.node_id,
    nodeType: r.node_type,
    ...(r.runtime ? { runtime: r.runtime } : {}),
    attempt: r.attempt,
    queue: r.queue,
    input: r.input ?? {},
    notBefore: r.not_before.getTime(),
    ...(r.sensitive ? { sensitive: true } : {}),
  };
}

function isTransient(err: unknown): boolean {
  if (err instanceof StoreError || err instanceof TransientDbError) return true;
  // Two starts with one idempotency key racing past ON CONFLICT (e.g. the winner rolled back and
  // retried): the next attempt finds the winner.
  return err instanceof UniqueViolation && err.constraint === 'runs_idempotency_key';
}

/** Maps a machine rejection to the API's coded error (DESIGN §7). */
export function toWeftError(err: MachineError): WeftError {
  switch (err.code) {
    case 'INVALID_REQUEST':
      return new WeftError('BAD_USER_INPUT', err.message);
    case 'RUN_FINISHED':
    case 'RUN_ACTIVE':
      return new WeftError('CONFLICT', err.message);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The node states each run's last event left, in this process, keyed by tenant and run, with the
 * run's `event_seq` after that event (issue 6: an event should not reload every task of its run).
 * An entry is used only for the event whose locked run row still has that `event_seq`: any event
 * applied elsewhere (another process, `failWait`) bumps it, and the entry is then ignored. Writes
 * that do not bump it change nothing the node states hold (a claim's RUNNING, leases, wake-ups,
 * which the machine treats alike). `take` removes the entry while an event uses it, so a failed or
 * retried transaction never leaves a half-applied snapshot behind. At most 1,000 runs, least
 * recently used out first.
 */
class SnapshotCache {
  private readonly entries = new Map<string, { seq: number; nodes: Map<string, NodeState> }>();

  constructor(private readonly max = 1_000) {}

  /** The node states for the event about to be applied at `seq`, or undefined (then load them). */
  take(tenantId: string, runId: string, seq: number): Map<string, NodeState> | undefined {
    const key = `${tenantId}:${runId}`;
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    return e.seq === seq ? e.nodes : undefined;
  }

  /** Keeps the node states committed at `seq`. */
  put(tenantId: string, runId: string, seq: number, nodes: Map<string, NodeState>): void {
    const key = `${tenantId}:${runId}`;
    this.entries.delete(key);
    this.entries.set(key, { seq, nodes });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }
}
