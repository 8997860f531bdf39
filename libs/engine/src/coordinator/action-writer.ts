import type { EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { jsonb, sql } from '@weft/persistence';
import type { WorkflowDag } from '../model/dag.js';
import { isSensitive } from '../model/payload-hygiene.js';
import { nodeQueue, type WorkflowNode } from '../model/workflow-definition.js';
import { TaskStatus, isWorkerType, type JsonValue, type RunStatus } from '../model/workflow-types.js';
import type { Action, CreateTask, StartChildRun } from '../statemachine/actions.js';
import { assertNever } from '../statemachine/errors.js';
import type { TakenTask, TaskJob } from './ports.js';
import { expectRows, runWrites, type WritePart } from './write-parts.js';

export { CoordinatorInvariantError } from './write-parts.js';

/** The run row columns an event may change besides `event_seq` (set by FinishRun / ReopenRun). */
export interface RunPatch {
  status?: RunStatus;
  version?: number;
  input?: JsonValue;
  config?: JsonValue;
  /** `null` clears the column. */
  output?: JsonValue | null;
  error?: string | null;
  finishedAt?: Date | null;
}

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

/** One buffered `tasks` row (a CreateTask, or a row of CreateIterations). */
interface TaskRow {
  id: string;
  node_id: string;
  node_type: string;
  queue: string | null;
  runtime: string | null;
  status: string;
  iteration: number | null;
  input: JsonValue | null;
  output: JsonValue | null;
  error: string | null;
  branches: string[] | null;
  wake_at: string | null;
  awaited_signal: string | null;
  finished: boolean;
  /** Set when the row's attempt is dispatched in the same flush (the dispatch lease, or a taken attempt's run lease). */
  lease_expires_at?: string;
  lease_token?: string | null;
}

/** The columns of a task read back to dispatch it again (RetryTask, ReleaseIteration). */
interface DispatchRow {
  node_id: string;
  node_type: string;
  queue: string | null;
  runtime: string | null;
  input: JsonValue | null;
}

/** Task statuses a CreateTask can carry that are already final. */
const FINAL = new Set<string>([TaskStatus.Completed, TaskStatus.Failed, TaskStatus.Skipped, TaskStatus.Cancelled]);
/**
 * Actions written without flushing the buffers first: the buffered ones (new task and outbox
 * rows, and the completion or failure of an existing task, which no other buffered write
 * touches), and signal rows, which no buffered write depends on.
 */
const UNORDERED = new Set<Action['type']>(['CreateTask', 'DispatchTask', 'CompleteTask', 'FailTask', 'ConsumeSignal', 'BufferSignal']);
/** Task statuses CancelTasks stops. */
const ACTIVE = [TaskStatus.Pending, TaskStatus.Queued, TaskStatus.Running, TaskStatus.Waiting];

/** Nodes dispatched to a worker queue (HTTP and CODE). */
export function isWorkerNode(n: WorkflowNode): boolean {
  return isWorkerType(n.type);
}

interface OutboxRow {
  task_id: string;
  attempt: number;
  queue: string;
  not_before: string;
}

/**
 * Turns one transition's actions into rows, in order, inside the event's tenant transaction
 * (STYLE "Layering" 3: the coordinator is the only code that writes run and task rows).
 *
 * CreateTask, DispatchTask, CompleteTask and FailTask actions are buffered: new tasks (with the
 * lease of the attempt dispatched with them) in one multi-row INSERT, outbox rows in one upsert,
 * each completion or failure an UPDATE, all sent as one statement ({@link runWrites}) together
 * with the caller's own closing writes (the history row and the run update). Any other action
 * flushes the buffers first, so the effect is the same as writing each action in order.
 * Updates are fenced by task id (and attempt where the action has one); an update that matches
 * no row means the stored run drifted from the locked snapshot and throws
 * {@link CoordinatorInvariantError}, rolling the event back.
 */
export class ActionWriter {
  private creates: TaskRow[] = [];
  /** The buffered `creates`, by task id. */
  private created = new Map<string, TaskRow>();
  private outbox = new Map<string, OutboxRow>();
  /** Buffered writes to existing rows (completions, failures, leases of re-dispatched attempts). */
  private pending: WritePart[] = [];
  private readonly jobs: TaskJob[] = [];
  private readonly run: RunPatch = {};
  private readonly children: StartChildRun[] = [];
  private taken: TakenTask | undefined;

  /**
   * `now` stamps every row this event writes (the machine's clock reading for the event);
   * `dag` is the definition the machine decided with (for a retried task's runtime/queue);
   * `dispatchLeaseMs` is the lease a dispatched attempt gets after its `not_before` (issue 4:
   * `tasks.lease_expires_at`, default 30 000 ms); `take`, when given, lets the reporting worker
   * take one dispatched attempt ({@link EagerTake}).
   */
  constructor(
    private readonly m: EntityManager,
    private readonly tenantId: string,
    private readonly runId: string,
    private readonly now: Date,
    private readonly dag: WorkflowDag,
    private readonly dispatchLeaseMs = 30_000,
    private readonly take?: EagerTake,
  ) {}

  /**
   * Persists `actions` in order; returns the jobs to enqueue after commit and the run patch.
   * `closing` gives writes of the caller's that depend on the result (the history row and the
   * run update): they go in the same statement as the last buffered writes.
   */
  async write(actions: readonly Action[], closing: (result: WriteResult) => WritePart[] = () => []): Promise<WriteResult> {
    for (const a of actions) await this.one(a);
    const result: WriteResult = { jobs: this.jobs, run: this.run, children: this.children, ...(this.taken ? { taken: this.taken } : {}) };
    await this.flush(closing(result));
    return result;
  }

  private async one(a: Action): Promise<void> {
    // Everything but the buffered and row-independent actions sees the buffered rows written.
    if (!UNORDERED.has(a.type)) await this.flush();
    switch (a.type) {
      case 'CreateTask':
        this.buffer(taskRow(a));
        return;
      case 'DispatchTask':
        this.dispatch(a.taskId, a.attempt, a.node.node_id, a.node.type, nodeQueue(a.node), a.node.runtime, a.input, a.notBefore);
        return;
      case 'CreateIterations': {
        const queue = nodeQueue(a.node);
        // The aggregate task: never dispatched (no queue), so never leased or swept.
        this.buffer({ ...taskRow({ type: 'CreateTask', taskId: a.taskId, node: a.node, status: TaskStatus.Running }), queue: null });
        a.iterations.forEach((it, i) => {
          const status = i < a.dispatch ? TaskStatus.Pending : TaskStatus.Waiting;
          this.buffer({ ...taskRow({ type: 'CreateTask', taskId: it.taskId, node: a.node, status, input: it.input }), iteration: i });
          if (i < a.dispatch) this.dispatch(it.taskId, 0, a.node.node_id, a.node.type, queue, a.node.runtime, it.input, a.notBefore);
        });
        return;
      }
      case 'ReleaseIteration': {
        const r = await sql<DispatchRow & { attempt: number }>(
          this.m,
          `UPDATE tasks SET status = 'PENDING', updated_at = $3
            WHERE tenant_id = $1 AND id = $2 AND status = 'WAITING' AND iteration IS NOT NULL
            RETURNING node_id, node_type, queue, runtime, input, attempt`,
          [this.tenantId, a.taskId, this.now],
        );
        this.expectOne(r.rowCount, `waiting iteration ${a.iteration} (task ${a.taskId}) to release`);
        this.redispatch(a.taskId, r.rows[0]!.attempt, r.rows[0]!, a.notBefore);
        return;
      }
      case 'SkipIterations': {
        const r = await sql(
          this.m,
          `UPDATE tasks SET status = 'SKIPPED', error = $3, updated_at = $4, finished_at = $4
            WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND status = 'WAITING' AND iteration IS NOT NULL`,
          [this.tenantId, a.taskIds, a.reason, this.now],
        );
        expectRows(this.runId, a.taskIds.length, r.rowCount, `waiting iterations of ${a.nodeId} to skip`);
        return;
      }
      case 'StartChildRun': {
        const r = await sql(
          this.m,
          `UPDATE tasks SET wake_at = NULL, retry_at = NULL, updated_at = $4 WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'WAITING'`,
          [this.tenantId, a.taskId, a.attempt, this.now],
        );
        this.expectOne(r.rowCount, `waiting SUBWORKFLOW task ${a.taskId} attempt ${a.attempt} to start a child run for`);
        this.children.push(a);
        return;
      }
      case 'RetryChild': {
        const r = await sql(
          this.m,
          `UPDATE tasks SET attempt = attempt + 1, error = $4, wake_at = $5, retry_at = $5, updated_at = $6
            WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'WAITING'`,
          [this.tenantId, a.taskId, a.attempt, a.reason, a.notBefore, this.now],
        );
        this.expectOne(r.rowCount, `waiting SUBWORKFLOW task ${a.taskId} attempt ${a.attempt} to retry`);
        return;
      }
      case 'ConsumeSignal': {
        const r = await sql(
          this.m,
          `UPDATE signals SET consumed_at = $3, consumed_by_task_id = $4
            WHERE tenant_id = $1 AND id = $2 AND consumed_at IS NULL`,
          [this.tenantId, a.signalId, this.now, a.taskId],
        );
        this.expectOne(r.rowCount, `signal ${a.signalId} to consume`);
        return;
      }
      case 'BufferSignal':
        await sql(this.m, `INSERT INTO signals (tenant_id, id, run_id, name, payload, created_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`, [
          this.tenantId,
          uuidv7(),
          this.runId,
          a.name,
          jsonb(a.payload),
          this.now,
        ]);
        return;
      case 'CompleteTask':
        this.pending.push({
          text: `UPDATE tasks SET status = 'COMPLETED', output = $4::jsonb, error = NULL, updated_at = $5, finished_at = $5
                  WHERE tenant_id = $1 AND id = $2 AND attempt = $3`,
          params: [this.tenantId, a.taskId, a.attempt, jsonb(a.output), this.now],
          expect: { rows: 1, what: `task ${a.taskId} attempt ${a.attempt} to complete` },
        });
        return;
      case 'FailTask':
        this.pending.push({
          text: `UPDATE tasks SET status = 'FAILED', error = $4, updated_at = $5, finished_at = $5
                  WHERE tenant_id = $1 AND id = $2 AND attempt = $3`,
          params: [this.tenantId, a.taskId, a.attempt, a.reason, this.now],
          expect: { rows: 1, what: `task ${a.taskId} attempt ${a.attempt} to fail` },
        });
        return;
      case 'RetryTask': {
        const r = await sql<DispatchRow>(
          this.m,
          `UPDATE tasks SET status = 'PENDING', attempt = attempt + 1, error = $4, updated_at = $5
            WHERE tenant_id = $1 AND id = $2 AND attempt = $3
            RETURNING node_id, node_type, queue, runtime, input`,
          [this.tenantId, a.taskId, a.attempt, a.reason, this.now],
        );
        this.expectOne(r.rowCount, `task ${a.taskId} attempt ${a.attempt} to retry`);
        this.redispatch(a.taskId, a.attempt + 1, r.rows[0]!, a.notBefore);
        return;
      }
      case 'RecordBranches': {
        const r = await sql(
          this.m,
          `UPDATE tasks SET branches = $3::text[], updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
          [this.tenantId, a.taskId, a.branches, this.now],
        );
        this.expectOne(r.rowCount, `task ${a.taskId} to record branches on`);
        return;
      }
      case 'ResolveWait': {
        const r = await sql(
          this.m,
          `UPDATE tasks SET status = $3, output = $4::jsonb, error = $5, wake_at = NULL, awaited_signal = NULL,
                  updated_at = $6, finished_at = $6
            WHERE tenant_id = $1 AND id = $2 AND status = 'WAITING'`,
          [this.tenantId, a.taskId, a.status, jsonb(a.output), a.reason ?? null, this.now],
        );
        this.expectOne(r.rowCount, `waiting task ${a.taskId} to resolve`);
        return;
      }
      case 'ReopenRun':
        await sql(
          this.m,
          `WITH reset AS (
             DELETE FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($3::text[]) RETURNING id
           )
           DELETE FROM outbox WHERE tenant_id = $1 AND task_id IN (SELECT id FROM reset)`,
          [this.tenantId, this.runId, a.resetNodes],
        );
        Object.assign(this.run, {
          status: 'RUNNING',
          version: a.version,
          input: a.input,
          config: a.config,
          output: null,
          error: null,
          finishedAt: null,
        } satisfies RunPatch);
        return;
      case 'CancelTasks':
        await sql(
          this.m,
          `UPDATE tasks SET status = 'CANCELLED', error = $3, wake_at = NULL, updated_at = $4, finished_at = $4
            WHERE tenant_id = $1 AND run_id = $2 AND status = ANY($5::text[])`,
          [this.tenantId, this.runId, a.reason, this.now, ACTIVE],
        );
        return;
      case 'FinishRun':
        Object.assign(this.run, {
          status: a.status,
          error: a.reason ?? null,
          output: a.output === undefined ? null : a.output,
          finishedAt: this.now,
        } satisfies RunPatch);
        return;
      default:
        assertNever(a);
    }
  }

  /** Buffers the `tasks` row of a CreateTask (or of CreateIterations). */
  private buffer(row: TaskRow): void {
    this.creates.push(row);
    this.created.set(row.id, row);
  }

  /**
   * Writes every buffered write, and `closing`, in one statement ({@link runWrites}): the
   * completions and failures, the new tasks (one INSERT, each dispatched one with its lease), the
   * outbox rows (one upsert) and the leases of attempts dispatched again.
   */
  private async flush(closing: WritePart[] = []): Promise<void> {
    const parts = this.pending;
    this.pending = [];
    if (this.creates.length) {
      parts.push({
        text: `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, queue, runtime, status, attempt, iteration, input, output, error,
                            branches, wake_at, awaited_signal, created_at, updated_at, finished_at, lease_expires_at, lease_token)
         SELECT $1, t.id, $2, t.node_id, t.node_type, t.queue, t.runtime, t.status, 0, t.iteration, t.input, t.output, t.error,
                t.branches, t.wake_at, t.awaited_signal, $3, $3, CASE WHEN t.finished THEN $3::timestamptz END, t.lease_expires_at, t.lease_token
           FROM jsonb_to_recordset($4::jsonb) AS t(id uuid, node_id text, node_type text, queue text, runtime text, status text, iteration int,
                input jsonb, output jsonb, error text, branches text[], wake_at timestamptz, awaited_signal text, finished boolean,
                lease_expires_at timestamptz, lease_token uuid)`,
        params: [this.tenantId, this.runId, this.now, JSON.stringify(this.creates)],
      });
      this.creates = [];
      this.created = new Map();
    }
    if (this.outbox.size) {
      parts.push({
        text: `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, created_at)
           SELECT $1, $2, o.task_id, o.attempt, o.queue, o.not_before, $3
             FROM jsonb_to_recordset($4::jsonb) AS o(task_id uuid, attempt int, queue text, not_before timestamptz)
           ON CONFLICT (tenant_id, task_id) DO UPDATE
             SET attempt = EXCLUDED.attempt, queue = EXCLUDED.queue, not_before = EXCLUDED.not_before,
                 created_at = EXCLUDED.created_at, claimed_at = NULL, enqueued_at = NULL`,
        params: [this.tenantId, this.runId, this.now, JSON.stringify([...this.outbox.values()])],
      });
      this.outbox = new Map();
    }
    await runWrites(this.m, this.runId, [...parts, ...closing]);
  }

  /** Buffers the outbox row of a task attempt and the job to enqueue after commit. */
  private dispatch(
    taskId: string,
    attempt: number,
    nodeId: string,
    nodeType: string,
    queue: string,
    runtime: string | undefined,
    input: JsonValue,
    notBefore: Date,
  ): void {
    const job: TaskJob = {
      tenantId: this.tenantId,
      runId: this.runId,
      taskId,
      nodeId,
      nodeType,
      ...(runtime ? { runtime } : {}),
      attempt,
      queue,
      input,
      notBefore: notBefore.getTime(),
      ...(isSensitive(this.dag.getNode(nodeId)) ? { sensitive: true } : {}),
    };
    const take = this.take && !this.taken && queue === this.take.queue && notBefore.getTime() <= this.now.getTime() ? this.take : undefined;
    // A taken attempt has nothing to enqueue, so no outbox row: if its worker dies, the lease
    // sweep finds it by its lease alone.
    if (!take) this.outbox.set(taskId, { task_id: taskId, attempt, queue, not_before: notBefore.toISOString() });
    // The attempt's lease: a taken one is RUNNING under the worker's token for `leaseMs`, any
    // other waits for a claim until `not_before` + `dispatchLeaseMs`.
    const leaseEnd = new Date(take ? this.now.getTime() + take.leaseMs : notBefore.getTime() + this.dispatchLeaseMs).toISOString();
    const token = take?.leaseToken ?? null;
    const row = this.created.get(taskId);
    if (row) {
      row.lease_expires_at = leaseEnd;
      row.lease_token = token;
      if (take) row.status = TaskStatus.Running;
    } else {
      this.pending.push({
        text: `UPDATE tasks SET lease_expires_at = $4, lease_token = $5::uuid, status = COALESCE($6, status)
                WHERE tenant_id = $1 AND id = $2 AND attempt = $3`,
        params: [this.tenantId, taskId, attempt, leaseEnd, token, take ? TaskStatus.Running : null],
      });
    }
    if (take) {
      this.taken = { job, leaseToken: take.leaseToken };
      return;
    }
    this.jobs.push(job);
  }

  /** Dispatches a stored task again (a retry, a released iteration) with its stored input and queue. */
  private redispatch(taskId: string, attempt: number, row: DispatchRow, notBefore: Date): void {
    const node = this.dag.getNode(row.node_id);
    const queue = row.queue ?? (node ? nodeQueue(node) : row.node_type.toLowerCase());
    this.dispatch(taskId, attempt, row.node_id, row.node_type, queue, row.runtime ?? node?.runtime, row.input ?? {}, notBefore);
  }

  private expectOne(rowCount: number, what: string): void {
    expectRows(this.runId, 1, rowCount, what);
  }
}

/** The `tasks` row of a CreateTask (no iteration). */
function taskRow(c: CreateTask): TaskRow {
  return {
    id: c.taskId,
    node_id: c.node.node_id,
    node_type: c.node.type,
    queue: isWorkerNode(c.node) ? nodeQueue(c.node) : null,
    runtime: c.node.runtime ?? null,
    status: c.status,
    iteration: null,
    input: c.input ?? null,
    output: c.output ?? null,
    error: c.error ?? null,
    branches: c.branches ?? null,
    wake_at: c.wakeAt ? c.wakeAt.toISOString() : null,
    awaited_signal: c.awaitedSignal ?? null,
    finished: FINAL.has(c.status),
  };
}

/** A compact, JSON-safe summary of an action for the run history (no inputs or outputs). */
export function summarizeAction(a: Action): { [key: string]: JsonValue } {
  const s = (o: { [key: string]: JsonValue | undefined }) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [key: string]: JsonValue };
  switch (a.type) {
    case 'CreateTask':
      return s({
        type: a.type,
        nodeId: a.node.node_id,
        taskId: a.taskId,
        status: a.status,
        error: a.error,
        branches: a.branches,
        wakeAt: a.wakeAt?.toISOString(),
        awaitedSignal: a.awaitedSignal,
      });
    case 'DispatchTask':
      return s({ type: a.type, nodeId: a.node.node_id, taskId: a.taskId, attempt: a.attempt, queue: nodeQueue(a.node), notBefore: a.notBefore.toISOString() });
    case 'CompleteTask':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt });
    case 'FailTask':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt, reason: a.reason });
    case 'RetryTask':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt, reason: a.reason, notBefore: a.notBefore.toISOString() });
    case 'RecordBranches':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, branches: a.branches });
    case 'ResolveWait':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, status: a.status, reason: a.reason });
    case 'BufferSignal':
      return s({ type: a.type, name: a.name });
    case 'ConsumeSignal':
      return s({ type: a.type, signalId: a.signalId, taskId: a.taskId });
    case 'ReopenRun':
      return s({ type: a.type, version: a.version, resetNodes: a.resetNodes });
    case 'CancelTasks':
      return s({ type: a.type, reason: a.reason });
    case 'FinishRun':
      return s({ type: a.type, status: a.status, reason: a.reason });
    case 'CreateIterations':
      return s({ type: a.type, nodeId: a.node.node_id, taskId: a.taskId, iterations: a.iterations.length, dispatched: a.dispatch });
    case 'ReleaseIteration':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, iteration: a.iteration });
    case 'SkipIterations':
      return s({ type: a.type, nodeId: a.nodeId, skipped: a.taskIds.length, reason: a.reason });
    case 'StartChildRun':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt, childRunId: a.childRunId, workflowId: a.workflowId, version: a.version });
    case 'RetryChild':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt, reason: a.reason, notBefore: a.notBefore.toISOString() });
    default:
      return assertNever(a);
  }
}
