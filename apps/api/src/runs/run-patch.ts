import type { RunChange, RunStatus, TaskChange, TaskStatus } from '@weft/engine';
import { asJsonb, EVENT_JSON_COLUMNS, jsonbTextBytes, TASK_JSON_COLUMNS } from '@weft/persistence';
import { orderTasks } from './run.mapper.js';
import type { RunEventObject, RunObject, TaskObject } from './run.object.js';
import { StoredJsonLoader, type StoredJsonRef } from './stored-json.loader.js';

/** Task statuses a `cancelActive` change cancels (the coordinator's CancelTasks). */
const ACTIVE = new Set<string>(['PENDING', 'QUEUED', 'RUNNING', 'WAITING']);

/** Node ids whose order is the same under every collation PostgreSQL may sort `node_id` with. */
const PLAIN_ID = /^[a-z0-9]*$/;

/** What a patch needs besides the change: the new state's loader, and the waits of a page of tasks. */
export interface PatchTools {
  tenantId: string;
  loader: StoredJsonLoader;
  /** The `pageWaits` of a page of tasks (read when a QUEUED task's waitReason is asked for). */
  pageWaits: (rows: readonly TaskObject[]) => TaskObject['pageWaits'];
  /** The definition of the run's version, for a new SWITCH task's decision. */
  runDefinition?: TaskObject['runDefinition'];
}

/**
 * The loader of the state after `change`: the values `old` read that the change left alone, and
 * the values it carries. Every stored value a fresh read would give is then either read again or
 * the one carried (in jsonb's key order, as the column gives it back). Of the history events'
 * values (which never change) it keeps only those of the events in `events` (the seqs on the
 * pages of history the new state holds), and carries the change's event's only when it is among
 * them: the others are read if ever asked for, so a run watched for a long time does not hold
 * the values of all its events.
 */
export function nextLoader(old: StoredJsonLoader, run: RunObject, change: RunChange, events: ReadonlySet<number>): StoredJsonLoader {
  const seeds: [StoredJsonRef, unknown][] = [];
  const runRef = (column: 'output' | 'error'): StoredJsonRef => ({ table: 'runs', tenantId: run.tenantId, id: run.id, column });
  const taskRef = (id: string, column: 'input' | 'output' | 'error'): StoredJsonRef => ({ table: 'tasks', tenantId: run.tenantId, id, column });
  if (change.run.output !== undefined) seeds.push([runRef('output'), change.run.output]);
  if (change.run.error !== undefined) seeds.push([runRef('error'), change.run.error]);
  const cancelled = new Set<string>();
  for (const t of change.tasks) {
    if (t.op === 'create') seeds.push([taskRef(t.id, 'input'), t.input], [taskRef(t.id, 'output'), t.output], [taskRef(t.id, 'error'), t.error]);
    else if (t.op === 'set') {
      if (t.output !== undefined) seeds.push([taskRef(t.id, 'output'), t.output]);
      if (t.error !== undefined) seeds.push([taskRef(t.id, 'error'), t.error]);
    } else cancelled.add(t.reason);
  }
  if (events.has(change.seq)) {
    const event = (column: 'payload' | 'actions' | 'error'): StoredJsonRef => ({
      table: 'run_events',
      tenantId: run.tenantId,
      runId: run.id,
      seq: change.seq,
      column,
    });
    seeds.push([event('payload'), change.event.payload], [event('actions'), change.event.actions], [event('error'), change.event.error]);
  }
  const seeded = new Set(seeds.map(([ref]) => StoredJsonLoader.keyOf(ref)));
  // Event keys end `|<runId>:<seq>|<column>`: the history of this run, the one the loader serves.
  const eventKept = (key: string) => {
    const end = key.lastIndexOf('|');
    return events.has(Number(key.slice(key.lastIndexOf(':', end) + 1, end)));
  };
  // A cancel sets the error of tasks this change does not name: every task error is read again.
  const taskErrors = cancelled.size > 0;
  const next = old.successor(
    (key) => seeded.has(key) || (key.startsWith('run_events|') ? !eventKept(key) : taskErrors && key.startsWith('tasks|') && key.endsWith('|error')),
  );
  for (const [ref, value] of seeds) next.seed(ref, typeof value === 'object' ? asJsonb(value) : value);
  return next;
}

/** The run's own fields after `change` (the caller gives it its shared state). */
export function patchRunFields(old: RunObject, change: RunChange, loader: StoredJsonLoader): RunObject {
  const { shared: _s, settled: _v, pageWaits: _w, ...rest } = old as RunObject & { shared?: unknown; settled?: unknown };
  const next: RunObject = { ...rest, seq: change.seq, updatedAt: new Date(change.at), jsonLoader: loader };
  if (change.run.status !== undefined) next.status = change.run.status as RunStatus;
  if (change.run.finishedAt !== undefined) next.finishedAt = change.run.finishedAt === null ? null : new Date(change.run.finishedAt);
  if (old.jsonBytes) {
    const bytes = { ...old.jsonBytes };
    if (change.run.output !== undefined) bytes.output = jsonbTextBytes(change.run.output);
    if (change.run.error !== undefined) bytes.error = textBytes(change.run.error);
    next.jsonBytes = bytes;
  } else {
    if (change.run.output !== undefined) next.output = asJsonb(change.run.output);
    if (change.run.error !== undefined) next.error = change.run.error;
  }
  return next;
}

/**
 * A page of tasks (first `n` of the run, read with the sizes of `cols`) after `change`; undefined
 * when it cannot be computed (a task it names is missing from a page that holds every task, or
 * the order of new rows depends on the database's collation).
 */
export function patchTaskPage(rows: readonly TaskObject[], n: number, cols: readonly string[], change: RunChange, tools: PatchTools): TaskObject[] | undefined {
  const at = new Date(change.at);
  const complete = rows.length < n;
  const out: TaskObject[] = rows.map((t) => ({ ...t, jsonLoader: tools.loader, jsonBytes: t.jsonBytes ? { ...t.jsonBytes } : t.jsonBytes }));
  const byId = new Map(out.map((t) => [t.id, t]));
  const created: TaskObject[] = [];
  for (const op of change.tasks) {
    if (op.op === 'create') {
      if (byId.has(op.id)) return undefined;
      const t = newTask(op, at, cols, tools.tenantId, tools.loader);
      if (tools.runDefinition) t.runDefinition = tools.runDefinition;
      created.push(t);
      byId.set(op.id, t);
    } else if (op.op === 'set') {
      const t = byId.get(op.id);
      if (!t) {
        if (complete) return undefined;
        continue; // on a later page
      }
      setTask(t, op, at, cols);
    } else {
      for (const t of byId.values()) {
        if (!ACTIVE.has(t.status)) continue;
        Object.assign(t, { status: 'CANCELLED' as TaskStatus, wakeAt: null, updatedAt: at, finishedAt: at });
        setBytes(t, cols, 'error', textBytes(op.reason));
      }
    }
  }
  const placed = insertByKey(out, created);
  if (!placed) return undefined;
  const page = orderTasks(placed).slice(0, n);
  const waits = tools.pageWaits(page);
  for (const t of page) t.pageWaits = waits;
  return page;
}

/** A page of history (`n` events after seq `after`) after `change` appended its event. */
export function patchHistoryPage(
  rows: readonly RunEventObject[],
  n: number,
  after: number,
  cols: readonly string[] | undefined,
  run: RunObject,
  change: RunChange,
  loader: StoredJsonLoader,
): RunEventObject[] {
  const out = rows.map((e) => ({ ...e, jsonLoader: loader }));
  // A page read after its run row may hold the event already.
  if (out.length >= n || change.seq <= after || out.some((x) => x.seq >= change.seq)) return out;
  const e = change.event;
  const sizes: Record<string, number> = { payload: jsonbTextBytes(e.payload), actions: jsonbTextBytes(e.actions), error: textBytes(e.error) };
  const wanted = cols ?? EVENT_JSON_COLUMNS;
  out.push({
    tenantId: run.tenantId,
    runId: run.id,
    seq: change.seq,
    type: e.type,
    at: new Date(change.at),
    nodeId: e.nodeId,
    attempt: e.attempt,
    ignored: e.ignored,
    jsonBytes: Object.fromEntries(wanted.map((c) => [c, sizes[c] ?? 0])),
    jsonLoader: loader,
  });
  return out;
}

function newTask(op: Extract<TaskChange, { op: 'create' }>, at: Date, cols: readonly string[], tenantId: string, loader: StoredJsonLoader): TaskObject {
  const sizes: Record<string, number> = { input: jsonbTextBytes(op.input), output: jsonbTextBytes(op.output), error: textBytes(op.error) };
  return {
    tenantId,
    redacted: op.sensitive,
    jsonBytes: Object.fromEntries(cols.filter((c) => (TASK_JSON_COLUMNS as readonly string[]).includes(c)).map((c) => [c, sizes[c] ?? 0])),
    jsonLoader: loader,
    id: op.id,
    nodeId: op.nodeId,
    nodeType: op.nodeType,
    status: op.status as TaskStatus,
    attempt: 0,
    attemptLimit: null,
    branches: op.branches,
    wakeAt: op.wakeAt === null ? null : new Date(op.wakeAt),
    awaitedSignal: op.awaitedSignal,
    iteration: op.iteration,
    loopIteration: op.loopIteration ?? null,
    queue: op.queue,
    createdAt: at,
    updatedAt: at,
    finishedAt: op.finished ? at : null,
  };
}

function setTask(t: TaskObject, op: Extract<TaskChange, { op: 'set' }>, at: Date, cols: readonly string[]): void {
  if (op.status !== undefined) t.status = op.status as TaskStatus;
  if (op.attempt !== undefined) t.attempt = op.attempt;
  if (op.attemptLimit !== undefined) t.attemptLimit = op.attemptLimit;
  if (op.branches !== undefined) t.branches = op.branches;
  if (op.wakeAt !== undefined) t.wakeAt = op.wakeAt === null ? null : new Date(op.wakeAt);
  if (op.awaitedSignal !== undefined) t.awaitedSignal = null;
  if (op.touch) t.updatedAt = at;
  if (op.finished) t.finishedAt = at;
  if (op.output !== undefined) setBytes(t, cols, 'output', jsonbTextBytes(op.output));
  if (op.error !== undefined) setBytes(t, cols, 'error', textBytes(op.error));
}

/** Records a changed value's size where the page read sizes (else the value is read, then charged). */
function setBytes(t: TaskObject, cols: readonly string[], column: 'output' | 'error', bytes: number): void {
  if (t.jsonBytes && cols.includes(column)) t.jsonBytes[column] = bytes;
}

/** The order of tasks in pages (TASK_ORDER): created at, node id, iteration (-1 for none), id; undefined when it depends on a collation. */
function compareKeys(a: TaskObject, b: TaskObject): number | undefined {
  const d = a.createdAt.getTime() - b.createdAt.getTime();
  if (d !== 0) return d;
  if (a.nodeId !== b.nodeId) {
    if (!PLAIN_ID.test(a.nodeId) || !PLAIN_ID.test(b.nodeId)) return undefined;
    return a.nodeId < b.nodeId ? -1 : 1;
  }
  const i = (a.iteration ?? -1) - (b.iteration ?? -1);
  if (i !== 0) return i;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** `rows` (in page order) with `created` put where the page order puts them; undefined when that is not known. */
function insertByKey(rows: TaskObject[], created: TaskObject[]): TaskObject[] | undefined {
  const out = [...rows];
  for (const t of created) {
    let i = out.length;
    while (i > 0) {
      const c = compareKeys(out[i - 1]!, t);
      if (c === undefined) return undefined;
      if (c < 0) break;
      i--;
    }
    out.splice(i, 0, t);
  }
  return out;
}

function textBytes(v: string | null | undefined): number {
  return v ? Buffer.byteLength(v) : 0;
}
