import {
  expectRows,
  RunPauseRepository,
  runWrites,
  SignalRepository,
  TaskWriteRepository,
  type NewOutboxRow,
  type NewTask,
  type RecordedCompletion,
  type RunPatch,
  type RunState,
  type StoredDispatch,
  type Transaction,
  type WritePart,
} from '@weft/persistence';
import { v7 as uuidv7 } from 'uuid';
import {
  assertNever,
  isSensitive,
  nodeJobFields,
  nodeQueue,
  TaskStatus,
  type Action,
  type JsonValue,
  type StartChildRun,
  type TakenTask,
  type TaskFlow,
  type TaskJob,
  type WorkflowDag,
} from '../index.js';
import { backlogTerms } from './backlog-terms.js';
import { writeReopenIterations, writeSkipIterations } from './iteration-writes.js';
import { decideRun, UNDECIDED } from './run-finally.js';
import { TaskChangeLog } from './run-change.js';
import { webhookDeliveries } from './webhook-events.js';
import { amendCreated, taskRow } from './task-rows.js';

/** What persisting one transition produced. */
export interface WriteResult {
  /** Task jobs to enqueue after commit (one per DispatchTask and RetryTask), in action order. */
  jobs: TaskJob[];
  /** Changes to the run row, applied with the history record. */
  run: RunPatch;
  /** Child runs to create in the same transaction (StartChildRun), in action order. */
  children: StartChildRun[];
  /** The attempt taken by the reporting worker ({@link EagerTake}); it is not in `jobs`. */
  taken?: TakenTask;
  /** The queues whose backlog rows a resume (ResumeRun) released, for fair dispatch after commit. */
  released?: string[];
}

/**
 * Eager dispatch: the reporting worker asks to execute, itself and at once, the first attempt
 * this event dispatches on `queue` that is due now. That attempt is written RUNNING under
 * `leaseToken` with a lease of `leaseMs` (as a worker's claim gives), with no outbox row and no
 * Bull job — the claim, the outbox row and its mark, and a Bull round trip are saved on a
 * chain's every step. Should the worker die, the lease sweep re-dispatches it once the lease
 * expires, as it does any claimed attempt.
 */
export interface EagerTake {
  queue: string;
  leaseToken: string;
  /** The lease the taken attempt gets after the event's now, ms. */
  leaseMs: number;
}

/** What the writer needs of the event's run. */
export type WriterRun = Pick<RunState, 'id' | 'workflowId' | 'priority' | 'traceparent'> & Partial<Pick<RunState, 'pausedAt' | 'pauseReason'>>;

/**
 * Actions written without flushing the buffers first: the buffered ones (new task and outbox
 * rows, and the completion or failure of an existing task, which no other buffered write
 * touches), and signal rows, which no buffered write depends on.
 */
const UNORDERED = new Set<Action['type']>(['CreateTask', 'DispatchTask', 'CompleteTask', 'FailTask', 'ConsumeSignal', 'BufferSignal']);
/** The actions a fenced write can carry: none needs a row read or a statement of its own. */
const FENCEABLE = new Set<Action['type']>(['CreateTask', 'DispatchTask', 'CompleteTask', 'FailTask', 'FinishRun', 'ArmDeadline']);

/** A completion of task `taskId` that keeps its NodeCompleted event on the task's row (see `TaskWriteRepository.completePart`). */
export type KeptCompletion = RecordedCompletion & { taskId: string };

/** Thrown by a capturing writer ({@link ActionWriter.capturing}) for an action a fenced write cannot carry. */
export class NotFenceable extends Error {
  constructor(readonly action: Action['type']) {
    super(`${action} needs the run locked`);
  }
}

/** Task statuses CancelTasks stops. */
const ACTIVE = [TaskStatus.Pending, TaskStatus.Queued, TaskStatus.Running, TaskStatus.Waiting];

/**
 * Turns one transition's actions into rows, in order, inside the event's tenant transaction (the coordinator is the only code
 * that writes run and task rows; the statements are the persistence repositories').
 *
 * CreateTask, DispatchTask, CompleteTask and FailTask actions are buffered: new tasks (with the lease of the attempt dispatched
 * with them) in one multi-row INSERT, outbox rows in one upsert, each completion or failure an UPDATE, all sent as one statement
 * ({@link runWrites}) together with the caller's own closing writes (the history row and the run update) and the webhook
 * deliveries of a run's end or pause. Any other action flushes the buffers first, so the effect is the same as writing each
 * action in order. Updates are fenced by task id (and attempt where the action has one); an update that matches no row means
 * the stored run drifted from the locked snapshot and throws a `WriteInvariantError`, rolling the event back.
 */
export class ActionWriter {
  private creates: NewTask[] = [];
  /** The buffered `creates`, by task id. */
  private created = new Map<string, NewTask>();
  private outbox = new Map<string, NewOutboxRow>();
  /** Buffered writes to existing rows (completions, failures, leases of re-dispatched attempts). */
  private pending: WritePart[] = [];
  private readonly jobs: TaskJob[] = [];
  private readonly patch: RunPatch = {};
  private readonly children: StartChildRun[] = [];
  private taken: TakenTask | undefined;
  /** The completion that keeps its event on the task's row (a capturing writer's only). */
  private recorded: KeptCompletion | undefined;
  /** The task writes made, in order, for the run update of a watched run (see run-change.ts). */
  readonly log = new TaskChangeLog();
  private readonly tasks: TaskWriteRepository;
  private readonly signals: SignalRepository;
  /** Capture mode: the statement parts, kept instead of sent. */
  private captured: WritePart[] | undefined;
  private refusalInline = false;
  /** True while the run is paused: its dispatches are held (see pause.ts), never taken. */
  private paused: boolean;
  /** The hold's sentence of the rows this writer holds for a pause. */
  private pausedDetail: string;
  private released: string[] | undefined;

  /**
   * `run` is the event's run: its span (`traceparent`, carried by its jobs so attempts join the
   * run's trace), its priority (the order of its backlog rows within the tenant) and its workflow
   * (a node limit without a key is one group per workflow and node);
   * `now` stamps every row this event writes (the machine's clock reading for the event);
   * `dag` is the definition the machine decided with (for a retried task's runtime/queue);
   * `take`, when given, lets the reporting worker take one dispatched attempt ({@link EagerTake}).
   */
  constructor(
    private readonly m: Transaction,
    private readonly tenantId: string,
    private readonly run: WriterRun,
    private readonly now: Date,
    private readonly dag: WorkflowDag,
    private readonly take?: EagerTake,
  ) {
    this.tasks = new TaskWriteRepository(m);
    this.signals = new SignalRepository(m);
    this.paused = run.pausedAt != null;
    this.pausedDetail = run.pauseReason ? `run paused: ${run.pauseReason}` : 'run paused';
  }

  /**
   * A writer that sends nothing: {@link write} keeps the event's writes as statement parts, read
   * with {@link parts}, for a fenced write (`fencedWrite`). It throws {@link NotFenceable} for an
   * action that needs a row read or a statement of its own. `m` only builds the parts. With
   * `recorded`, the completion of task `recorded.taskId` keeps the event on the task's row (see
   * `TaskWriteRepository.completePart`), whose history entry the caller then leaves out.
   */
  static capturing(m: Transaction, tenantId: string, run: WriterRun, now: Date, dag: WorkflowDag, take?: EagerTake, recorded?: KeptCompletion): ActionWriter {
    const writer = new ActionWriter(m, tenantId, run, now, dag, take);
    writer.captured = [];
    writer.recorded = recorded;
    return writer;
  }

  /** The parts a capturing writer kept, in order. */
  get parts(): readonly WritePart[] {
    return this.captured ?? [];
  }

  /**
   * True when a capturing writer's parts write the taken attempt as a new row that is QUEUED,
   * with its backlog row, should the take be refused (`fencedWrite` with `'inline'`); false when
   * the event holds no take or takes an existing row (its refusal is another form of the event).
   */
  get takeRefusalInline(): boolean {
    return this.refusalInline;
  }

  /**
   * Persists `actions` in order; returns the jobs to enqueue after commit and the run patch.
   * `closing` gives writes of the caller's that depend on the result (the history row and the
   * run update): they go in the same statement as the last buffered writes.
   */
  async write(actions: readonly Action[], closing: (result: WriteResult) => WritePart[] = () => []): Promise<WriteResult> {
    for (const a of actions) await this.one(a);
    this.pending.push(...actions.flatMap((a) => webhookDeliveries(this.tenantId, this.run.id, a, this.now)));
    const result: WriteResult = {
      jobs: this.jobs,
      run: this.patch,
      children: this.children,
      ...(this.taken ? { taken: this.taken } : {}),
      ...(this.released ? { released: this.released } : {}),
    };
    // The event's last write: it goes with the COMMIT (a later statement of the event sends it first).
    await this.flush(closing(result), true);
    return result;
  }

  private async one(a: Action): Promise<void> {
    if (this.captured && !FENCEABLE.has(a.type)) throw new NotFenceable(a.type);
    // Everything but the buffered and row-independent actions sees the buffered rows written.
    if (!UNORDERED.has(a.type)) await this.flush();
    const { tenantId, now } = this;
    switch (a.type) {
      case 'CreateTask':
        this.buffer(taskRow(a));
        return;
      case 'DispatchTask':
        this.limit(a.taskId, a.node.node_id, a.flow);
        this.dispatch(a.taskId, a.attempt, a.node.node_id, a.node.type, nodeQueue(a.node), a.node.runtime, a.input, a.notBefore, a.flow !== undefined);
        return;
      case 'CreateIterations': {
        const queue = nodeQueue(a.node);
        // The aggregate task: never dispatched (no queue), so never leased or swept.
        const loopIteration = a.loopIteration;
        this.buffer({ ...taskRow({ type: 'CreateTask', taskId: a.taskId, node: a.node, status: TaskStatus.Running, loopIteration }), queue: null });
        a.iterations.forEach((it, i) => {
          const status = i < a.dispatch ? TaskStatus.Pending : TaskStatus.Waiting;
          this.buffer({ ...taskRow({ type: 'CreateTask', taskId: it.taskId, node: a.node, status, input: it.input, loopIteration }), iteration: i });
          this.limit(it.taskId, a.node.node_id, it.flow);
          if (i < a.dispatch) this.dispatch(it.taskId, 0, a.node.node_id, a.node.type, queue, a.node.runtime, it.input, a.notBefore, it.flow !== undefined);
        });
        return;
      }
      case 'ReleaseIteration': {
        const row = await this.tasks.releaseIteration(tenantId, a.taskId, now);
        this.expectOne(row ? 1 : 0, `waiting iteration ${a.iteration} (task ${a.taskId}) to release`);
        this.log.set({ id: a.taskId, touch: true, status: TaskStatus.Queued });
        this.redispatch(a.taskId, row!.attempt, row!, a.notBefore);
        return;
      }
      case 'SkipIterations':
        return writeSkipIterations(this.tasks, tenantId, this.run.id, a, now, this.log);
      case 'ReopenIterations':
        return writeReopenIterations(this.tasks, tenantId, this.run.id, a, now, this.log);
      case 'StartChildRun':
        this.expectOne(
          await this.tasks.disarmForChild(tenantId, a.taskId, a.attempt, now),
          `waiting SUBWORKFLOW task ${a.taskId} attempt ${a.attempt} to start a child run for`,
        );
        this.log.set({ id: a.taskId, touch: true, wakeAt: null });
        this.children.push(a);
        return;
      case 'RetryChild':
        this.expectOne(
          await this.tasks.retryChild(tenantId, a.taskId, a.attempt, a.reason, a.notBefore, now, a.attemptLimit),
          `waiting SUBWORKFLOW task ${a.taskId} attempt ${a.attempt} to retry`,
        );
        this.log.set({
          id: a.taskId,
          touch: true,
          attempt: a.attempt + 1,
          error: a.reason,
          wakeAt: a.notBefore.toISOString(),
          status: TaskStatus.Waiting,
          ...limit(a),
        });
        return;
      case 'ConsumeSignal':
        this.expectOne(await this.signals.consume(tenantId, a.signalId, a.taskId, now), `signal ${a.signalId} to consume`);
        return;
      case 'BufferSignal':
        await this.signals.buffer(tenantId, this.run.id, uuidv7(), a.name, a.payload, now);
        return;
      case 'CompleteTask':
        // A task this event created (a loop ended at once) is a buffered row: amend it, for an
        // UPDATE in the statement of its INSERT would not see it.
        if (!amendCreated(this.created, a.taskId, { status: TaskStatus.Completed, output: a.output, error: null, finished: true })) {
          const recorded = this.recorded?.taskId === a.taskId ? this.recorded : undefined;
          this.pending.push(this.tasks.completePart(tenantId, this.run.id, a.taskId, a.attempt, a.output, now, recorded));
        }
        this.log.set({ id: a.taskId, touch: true, status: TaskStatus.Completed, output: this.shown(a.nodeId, a.output), error: null, finished: true });
        return;
      case 'FailTask':
        if (!amendCreated(this.created, a.taskId, { status: TaskStatus.Failed, error: a.reason, finished: true }))
          this.pending.push(this.tasks.failPart(tenantId, this.run.id, a.taskId, a.attempt, a.reason, now));
        this.log.set({ id: a.taskId, touch: true, status: TaskStatus.Failed, error: a.reason, finished: true });
        return;
      case 'RetryTask': {
        const row = await this.tasks.retry(tenantId, a.taskId, a.attempt, a.reason, now, a.attemptLimit);
        this.expectOne(row ? 1 : 0, `task ${a.taskId} attempt ${a.attempt} to retry`);
        this.log.set({ id: a.taskId, touch: true, status: TaskStatus.Queued, attempt: a.attempt + 1, error: a.reason, ...limit(a) });
        this.redispatch(a.taskId, a.attempt + 1, row!, a.notBefore);
        return;
      }
      case 'RecordBranches':
        this.expectOne(await this.tasks.recordBranches(tenantId, a.taskId, a.branches, now), `task ${a.taskId} to record branches on`);
        this.log.set({ id: a.taskId, touch: true, branches: a.branches });
        return;
      case 'ResolveWait':
        this.expectOne(await this.tasks.resolveWait(tenantId, a.taskId, a.status, a.output, a.reason ?? null, now), `waiting task ${a.taskId} to resolve`);
        this.log.set({
          id: a.taskId,
          touch: true,
          status: a.status,
          output: this.shown(a.nodeId, a.output),
          error: a.reason ?? null,
          wakeAt: null,
          awaitedSignal: null,
          finished: true,
        });
        return;
      case 'ReopenRun':
        await this.tasks.resetNodes(tenantId, this.run.id, a.resetNodes);
        this.log.reread = true;
        Object.assign(this.patch, {
          status: 'RUNNING',
          version: a.version,
          input: a.input,
          config: a.config,
          output: null,
          error: null,
          finishedAt: null,
        } satisfies RunPatch);
        return;
      case 'NextLoopIteration':
        this.expectOne(
          await this.tasks.nextLoopIteration(tenantId, this.run.id, a.taskId, a.bodyNodeIds, a.iteration, a.previous, now),
          `DO_WHILE task ${a.taskId} to start iteration ${a.iteration} of`,
        );
        this.log.reread = true;
        return;
      case 'CancelTasks':
        await this.tasks.cancelActive(tenantId, this.run.id, a.reason, ACTIVE, now);
        this.log.cancelActive(a.reason);
        return;
      case 'FinishRun':
        // A paused run's held backlog rows would stay held forever.
        if (this.paused) await new RunPauseRepository(this.m).dropHolds(tenantId, this.run.id, now);
        Object.assign(this.patch, {
          status: a.status,
          error: a.reason ?? null,
          output: a.output === undefined ? null : a.output,
          finishedAt: now,
          ...UNDECIDED,
          ...(this.paused ? { pausedAt: null, pauseReason: null } : {}),
        } satisfies RunPatch);
        return;
      case 'DecideRun':
        Object.assign(this.patch, await decideRun(this.m, tenantId, this.run.id, a, this.paused, now));
        // A paused run runs again for its finally step: watchers read its pause fields anew.
        if (this.paused) this.log.reread = true;
        this.paused = false;
        return;
      case 'PauseRun':
        // Attempts admitted and not claimed go back to the backlog, which is held.
        await new RunPauseRepository(this.m).hold(tenantId, this.run.id, (this.pausedDetail = `run paused: ${a.reason}`), now);
        this.paused = this.log.reread = true;
        Object.assign(this.patch, { pausedAt: now, pauseReason: a.reason } satisfies RunPatch);
        return;
      case 'ArmDeadline':
        Object.assign(this.patch, { deadlineAt: a.deadlineAt } satisfies RunPatch);
        return;
      case 'ResumeRun':
        this.released = await new RunPauseRepository(this.m).release(tenantId, this.run.id, now, this.run.pausedAt ?? null);
        this.paused = false;
        this.log.reread = true;
        Object.assign(this.patch, { pausedAt: null, pauseReason: null } satisfies RunPatch);
        return;
      default:
        assertNever(a);
    }
  }

  /** Buffers the `tasks` row of a CreateTask (or of CreateIterations). */
  private buffer(row: NewTask): void {
    this.creates.push(row);
    this.created.set(row.id, row);
    this.log.created(row);
  }

  /** A task's stored value as a watcher may see it: null for a sensitive node (the API answers null). */
  private shown(nodeId: string, value: JsonValue | undefined): JsonValue | null {
    const node = this.dag.getNode(nodeId);
    return node && isSensitive(node) ? null : (value ?? null);
  }

  /**
   * Writes every buffered write, and `closing`, in one statement ({@link runWrites}; with the
   * transaction's COMMIT when `atCommit`): the completions and failures, the new tasks (one INSERT,
   * each dispatched one with its lease), the outbox rows (one upsert) and the leases of attempts dispatched again.
   */
  private async flush(closing: WritePart[] = [], atCommit = false): Promise<void> {
    const parts = this.pending;
    this.pending = [];
    if (this.creates.length) {
      parts.push(this.tasks.insertPart(this.tenantId, this.run.id, this.now, this.creates));
      this.creates = [];
      this.created = new Map();
    }
    if (this.outbox.size) {
      parts.push(this.tasks.outboxPart(this.tenantId, this.run.id, this.now, [...this.outbox.values()]));
      this.outbox = new Map();
    }
    if (this.captured) this.captured.push(...parts, ...closing);
    else await runWrites(this.m, this.tenantId, this.run.id, [...parts, ...closing], { atCommit });
  }

  /**
   * Buffers the backlog row of a task attempt (its task QUEUED: fair dispatch admits it after
   * commit) and its job; an attempt due later (a retry's backoff) is held until then. The attempt
   * the reporting worker may take (eager dispatch) is written RUNNING instead, with no backlog row.
   */
  private dispatch(
    taskId: string,
    attempt: number,
    nodeId: string,
    nodeType: string,
    queue: string,
    runtime: string | undefined,
    input: JsonValue,
    notBefore: Date,
    /** The node has a concurrency or rate limit: only fair dispatch may start it, never an eager take. */
    limited: boolean,
  ): void {
    const job: TaskJob = {
      tenantId: this.tenantId,
      runId: this.run.id,
      taskId,
      nodeId,
      nodeType,
      ...(runtime ? { runtime } : {}),
      attempt,
      queue,
      input,
      notBefore: notBefore.getTime(),
      ...nodeJobFields(this.dag.getNode(nodeId)),
      ...(this.run.traceparent ? { traceparent: this.run.traceparent } : {}),
    };
    const due = notBefore.getTime() <= this.now.getTime();
    const take = this.take && !this.taken && !this.paused && !limited && queue === this.take.queue && due ? this.take : undefined;
    const terms = backlogTerms(this.dag.getNode(nodeId), notBefore, this.now, this.paused ? this.pausedDetail : undefined);
    // A taken attempt has nothing to enqueue, so no backlog row: if its worker dies, the lease
    // sweep finds it by its lease alone.
    if (!take) this.outbox.set(taskId, { taskId, attempt, queue, notBefore, priority: this.run.priority, ...terms });
    // A taken attempt is RUNNING under the worker's token for `leaseMs`; any other is QUEUED with
    // no lease until fair dispatch admits it.
    const leaseEnd = take ? new Date(this.now.getTime() + take.leaseMs) : null;
    const token = take?.leaseToken ?? null;
    const row = this.created.get(taskId);
    if (row) {
      row.leaseExpiresAt = leaseEnd;
      row.leaseToken = token;
      row.status = take ? TaskStatus.Running : TaskStatus.Queued;
    } else {
      this.pending.push(this.tasks.leasePart(this.tenantId, this.run.id, taskId, attempt, leaseEnd, token, take !== undefined));
      this.log.set({ id: taskId, touch: false, status: take ? TaskStatus.Running : TaskStatus.Queued });
    }
    if (take) {
      this.taken = { job, leaseToken: take.leaseToken };
      // Captured for a fenced write, a new row carries the refusal of its take itself (QUEUED,
      // with its backlog row): the statement needs no second form of the event.
      if (row && this.captured) {
        this.outbox.set(taskId, { taskId, attempt, queue, notBefore, priority: this.run.priority, ifRefused: true, startBy: terms.startBy });
        this.refusalInline = true;
      }
      return;
    }
    this.jobs.push(job);
  }

  /** Dispatches a stored task again (a retry, a released iteration) with its stored input and queue. */
  private redispatch(taskId: string, attempt: number, row: StoredDispatch, notBefore: Date): void {
    const node = this.dag.getNode(row.nodeId);
    const queue = row.queue ?? (node ? nodeQueue(node) : row.nodeType.toLowerCase());
    this.dispatch(
      taskId,
      attempt,
      row.nodeId,
      row.nodeType,
      queue,
      row.runtime ?? node?.runtime,
      (row.input as JsonValue | null) ?? {},
      notBefore,
      row.limited,
    );
  }

  /**
   * Records on the new row of task `taskId` the node limits its attempts obey (`flow`, resolved
   * when the node was activated): a limit without a key is one group per workflow and node.
   */
  private limit(taskId: string, nodeId: string, flow: TaskFlow | undefined): void {
    const row = this.created.get(taskId);
    if (!flow || !row) return;
    const group = `${this.run.workflowId}/${nodeId}`;
    if (flow.concurrency) Object.assign(row, { flowConcurrencyKey: flow.concurrency.key ?? group, flowConcurrencyLimit: flow.concurrency.limit });
    if (flow.rate) Object.assign(row, { flowRateKey: flow.rate.key ?? group, flowRateLimit: flow.rate.limit, flowRatePerSeconds: flow.rate.perSeconds });
  }

  private expectOne(rowCount: number, what: string): void {
    expectRows(this.run.id, 1, rowCount, what);
  }
}

/** The `attemptLimit` a retry granted (a resume after `on_exhausted: pause`), for the task change. */
function limit(a: { attemptLimit?: number }): { attemptLimit?: number } {
  return a.attemptLimit === undefined ? {} : { attemptLimit: a.attemptLimit };
}
