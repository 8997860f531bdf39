import type { HistoryEntry, NewTask, RunPatch } from '@weft/persistence';
import { isSensitive, type JsonValue, type RunChange, type TaskChange, type WorkflowDag } from '../index.js';

/**
 * The largest change carried on a run update, in bytes of the JSON of its stored values (task
 * inputs, outputs and errors, the run's output and error, the history row's payload, actions and
 * error). A larger one is not carried: its watchers read the run again.
 */
export const RUN_CHANGE_MAX_BYTES = 16 * 1024;

/** A task write as the {@link ActionWriter} made it: a new row (read when the change is built, after every write), or a change of stored rows. */
type Logged = { op: 'create'; row: NewTask } | Exclude<TaskChange, { op: 'create' }>;

/**
 * The task writes of one event, in write order, as the action writer's statements made them
 * (each entry mirrors one statement of TaskWriteRepository). Recording is a push per write; the
 * change is built from it only for a watched run ({@link buildRunChange}). `reread` is set by a
 * write this log cannot describe (ReopenRun's reset of nodes).
 */
export class TaskChangeLog {
  readonly entries: Logged[] = [];
  reread = false;

  created(row: NewTask): void {
    this.entries.push({ op: 'create', row });
  }

  set(change: Omit<Extract<TaskChange, { op: 'set' }>, 'op'>): void {
    this.entries.push({ op: 'set', ...change });
  }

  cancelActive(reason: string): void {
    this.entries.push({ op: 'cancelActive', reason });
  }
}

/** What an applied event leaves to build its {@link RunChange} from after commit. */
export interface ChangeSource {
  seq: number;
  now: Date;
  patch: RunPatch;
  log: TaskChangeLog;
  entry: HistoryEntry;
  dag: WorkflowDag;
}

/**
 * The {@link RunChange} of an applied event, or undefined when it is too big to carry
 * ({@link RUN_CHANGE_MAX_BYTES}). A change that sets columns the description does not cover
 * (version, input, config: a retry) or that the log could not describe is marked `reread`.
 */
export function buildRunChange(src: ChangeSource): RunChange | undefined {
  const { patch, entry } = src;
  const run: RunChange['run'] = {};
  if (patch.status !== undefined) run.status = patch.status as RunChange['run']['status'] & string;
  if (patch.output !== undefined) run.output = patch.output as JsonValue | null;
  if (patch.error !== undefined) run.error = patch.error;
  if (patch.finishedAt !== undefined) run.finishedAt = patch.finishedAt?.toISOString() ?? null;
  const tasks = src.log.entries.map((e) => (e.op === 'create' ? created(e.row, src.dag) : e));
  const change: RunChange = {
    seq: src.seq,
    at: src.now.toISOString(),
    run,
    tasks,
    event: {
      type: entry.type,
      nodeId: entry.nodeId,
      attempt: entry.attempt,
      payload: entry.payload as JsonValue,
      actions: entry.actions as JsonValue[],
      ignored: entry.ignored ?? null,
      error: entry.error ?? null,
    },
  };
  if (src.log.reread || patch.version !== undefined || patch.input !== undefined || patch.config !== undefined) change.reread = true;
  return valueBytes(change) > RUN_CHANGE_MAX_BYTES ? undefined : change;
}

function created(row: NewTask, dag: WorkflowDag): TaskChange {
  const node = dag.getNode(row.nodeId);
  const sensitive = node ? isSensitive(node) : false;
  return {
    op: 'create',
    id: row.id,
    nodeId: row.nodeId,
    nodeType: row.nodeType,
    queue: row.queue,
    status: row.status,
    iteration: row.iteration ?? null,
    loopIteration: row.loopIteration ?? null,
    input: sensitive ? null : ((row.input ?? null) as JsonValue | null),
    output: sensitive ? null : ((row.output ?? null) as JsonValue | null),
    error: row.error ?? null,
    branches: row.branches ?? null,
    wakeAt: row.wakeAt?.toISOString() ?? null,
    awaitedSignal: row.awaitedSignal ?? null,
    finished: row.finished,
    sensitive,
  };
}

/** Bytes of the stored values a change carries (what {@link RUN_CHANGE_MAX_BYTES} caps). */
function valueBytes(c: RunChange): number {
  const size = (v: unknown) => (v === undefined || v === null ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : Buffer.byteLength(JSON.stringify(v)));
  let n = size(c.run.output) + size(c.run.error) + size(c.event.payload) + size(c.event.actions) + size(c.event.error);
  for (const t of c.tasks) {
    if (t.op === 'create') n += size(t.input) + size(t.output) + size(t.error);
    else if (t.op === 'set') n += size(t.output) + size(t.error);
    else n += size(t.reason);
  }
  return n;
}
