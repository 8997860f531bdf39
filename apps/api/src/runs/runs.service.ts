import { Inject, Injectable, Optional } from '@nestjs/common';
import type { GraphQLResolveInfo } from 'graphql';
import type { JsonValue, RunChange, RunLabels } from '@weft/engine';
import { RunCommands } from '@weft/engine/coordinator';
import {
  asJsonb,
  EVENT_JSON_COLUMNS,
  isUuid,
  pickColumns,
  RUN_ITEMS_PAGE_MAX,
  RUN_JSON_COLUMNS,
  RunRepository,
  TASK_JSON_COLUMNS,
  type RunJsonColumn,
  type RunWait,
  type SizedTask,
  WorkerRegistryRepository,
} from '@weft/persistence';
import { WEFT_CONFIG, WeftMetrics, type WeftConfig } from '@weft/platform';
import type { Principal } from '../auth/principal.js';
import { toDag, type DagShape } from '../common/graph.js';
import { checkFirst } from '../common/page-size.js';
import { assertRunId, checkPriority, pageSize, runNotFound } from './run-arguments.js';
import { mermaidTasks, toMermaid, type MermaidGraph, type MermaidTask } from '../common/mermaid.js';
import { FlowService } from '../flow/flow.service.js';
import type { Wait } from '../flow/wait-reason.js';
import { LiveQueues } from '../queues/live-queues.js';
import { RunWaits } from './run-waits.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import type { SendSignalInput, StartRunInput } from './run-mutations.input.js';
import type { RunFilter } from './run-filter.input.js';
import { runRowFilter } from './run-filter.js';
import { orderTasks, sensitiveNodes, toRunEventObject, toRunObject, toTaskObject } from './run.mapper.js';
import type { RunConnection, RunEventObject, RunObject, SignalResult, TaskObject } from './run.object.js';
import { jsonBytes, responseScope, type ResponseScope } from './response-budget.js';
import { selectedFields, surelySelectedFields } from './selection.js';
import { RUNS_PAGE_MAX } from '@weft/contract';
import { StoredJsonLoader, type StoredJsonRef } from './stored-json.loader.js';
import { nextLoader, patchHistoryPage, patchRunFields, patchTaskPage } from './run-patch.js';

/** A run whose first page of tasks is loaded with the rest of its page of runs (one query for the page). */
type PagedRun = RunObject & { pageTasks?: (first: number, sized: typeof TASK_JSON_COLUMNS) => Promise<Map<string, SizedTask[]>> };

/** A value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/** What holds a stored JSON field: its value, read with the row, or else its size. */
type JsonHolder = { jsonBytes?: Partial<Record<string, number>>; jsonLoader?: StoredJsonLoader };

/**
 * A run sent to every runUpdated subscriber of it: each field it loads is read once for all
 * (`shared`); `settled` keeps the values read so far, which a carried change patches.
 */
type SharedRun = RunObject & { shared?: Map<string, Promise<unknown>>; settled?: Map<string, unknown> };

/**
 * Runs: writes go to the coordinator, reads to the run repository. A run id that is not a UUID,
 * unknown, or another tenant's answers WeftError NOT_FOUND, for reads and writes alike.
 */
@Injectable()
export class RunsService {
  constructor(
    private readonly commands: RunCommands,
    private readonly runs: RunRepository,
    private readonly workflows: WorkflowsService,
    private readonly flow: FlowService,
    registry: WorkerRegistryRepository,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
    @Optional() private readonly metrics?: WeftMetrics,
  ) {
    this.waits = new RunWaits(flow, new LiveQueues(registry));
  }

  /** Why runs and tasks wait. */
  private readonly waits: RunWaits;

  /**
   * A stored JSON field of a run, task or history row for the answer `info` belongs to: its size
   * is charged to the answer's budget (WEFT_MAX_RESPONSE_BYTES) before the value is read, so an
   * answer over the budget is refused (ResponseTooLargeError) without reading what passes it.
   * The value itself when it is known already (on the row, or read or carried for a shared run
   * state), else a promise of it.
   * @throws ResponseTooLargeError (or rejects with it) when the charge passes the budget
   */
  storedJson(context: object, info: GraphQLResolveInfo, holder: JsonHolder, ref: StoredJsonRef): MaybePromise<JsonValue | null> {
    const scope = this.scope(context, info);
    // Once refused, the answer is the refusal alone (response-limit.plugin.ts): the charge that
    // passed the limit carries it, and the other fields answer null rather than an error each.
    if (scope.budget.refused) return null;
    if (!holder.jsonBytes) {
      const value = ((holder as Record<string, unknown>)[ref.column] ?? null) as JsonValue | null;
      scope.budget.charge(jsonBytes(value));
      return value;
    }
    const loader = holder.jsonLoader ?? (scope.loader ??= this.loader());
    const size = holder.jsonBytes[ref.column];
    if (size !== undefined) {
      scope.budget.charge(size);
      return loader.loadNow(ref, scope.budget) as MaybePromise<JsonValue | null>;
    }
    // A field whose size was not read with the row (not found in the selection): read, then charge.
    return loader.load(ref, scope.budget).then((value) => {
      scope.budget.charge(jsonBytes(value));
      return value as JsonValue | null;
    });
  }

  /** {@link storedJson} for a text column (an error): the same charge, a string or null. */
  storedText(context: object, info: GraphQLResolveInfo, holder: JsonHolder, ref: StoredJsonRef): MaybePromise<string | null> {
    const value = this.storedJson(context, info, holder, ref);
    return value instanceof Promise ? value.then(textOf) : textOf(value);
  }

  /**
   * `read()`, a read of rows with the sizes of the stored values the answer `info` belongs to may
   * charge: that answer's values are read only once no such read of it is running
   * ({@link ResponseBudget.sizing}). With a `key`, the read is made once per answer for that key
   * and selection (aliases of one field with the same arguments read the same rows), each alias
   * still charging its own values.
   */
  sizing<T>(context: object, info: GraphQLResolveInfo, read: () => Promise<T>, key?: string): Promise<T> {
    const scope = this.scope(context, info);
    if (key === undefined) return scope.budget.sizing(read());
    const full = `${key}|${[...(selectedFields(info) ?? ['*'])].sort().join()}`;
    const reads = (scope.reads ??= new Map());
    let rows = reads.get(full) as Promise<T> | undefined;
    if (!rows) reads.set(full, (rows = scope.budget.sizing(read())));
    return rows;
  }

  /**
   * A page of rows (tasks, history, child runs) for the answer `info` belongs to: when the stored
   * values its items surely select (no directive may leave them out) pass the budget, the answer
   * is refused here, before any item resolves; once refused, no rows (the answer is the refusal alone).
   */
  within<T extends { jsonBytes?: Partial<Record<string, number>>; redacted?: boolean }>(context: object, info: GraphQLResolveInfo, rows: T[]): T[] {
    const budget = this.scope(context, info).budget;
    if (budget.refused) return [];
    const cols = [...surelySelectedFields(info)];
    let bytes = 0;
    for (const r of rows) if (!r.redacted) for (const c of cols) bytes += r.jsonBytes?.[c] ?? 0;
    budget.expect(bytes);
    return rows;
  }

  private scope(context: object, info: GraphQLResolveInfo): ResponseScope {
    return responseScope(context, info, this.config.maxResponseBytes);
  }

  private loader(): StoredJsonLoader {
    return new StoredJsonLoader(this.runs, this.metrics ? (n) => this.metrics!.storedValuesRead.inc(n) : undefined);
  }

  /** The run, with the sizes of the stored values `info` selects under it. */
  async get(p: Principal, runId: string, info?: GraphQLResolveInfo): Promise<RunObject> {
    return this.load(p.tenantId, runId, sized(selectedFields(info), RUN_JSON_COLUMNS));
  }

  /** The run of `tenantId`; WeftError NOT_FOUND when there is none. */
  async load(tenantId: string, runId: string, sizedColumns?: RunJsonColumn[]): Promise<RunObject> {
    const run = isUuid(runId) ? await this.runs.findSizedRun(tenantId, runId, sizedColumns) : null;
    if (!run) throw runNotFound(runId);
    return toRunObject(run);
  }

  /**
   * {@link load}, for a state shared by several readers (the subscribers of one run): tasks,
   * history, mermaid and stored JSON values are then read once, by the first reader that asks,
   * and shared (each reader's answer is still charged to its own budget).
   */
  async loadShared(tenantId: string, runId: string): Promise<RunObject> {
    return Object.assign(await this.load(tenantId, runId), {
      shared: new Map<string, Promise<unknown>>(),
      settled: new Map<string, unknown>(),
      jsonLoader: this.loader(),
    });
  }

  /** The run's seq now (undefined for an unknown run): what a watch checks before it reads the whole run again. */
  seqOf(tenantId: string, runId: string): Promise<number | undefined> {
    return this.runs.runSeq(tenantId, runId);
  }

  /**
   * The state after `change` of a shared run (from {@link loadShared}) at `change.seq - 1`,
   * without reading the run: its fields from the change; of what its readers loaded, the pages
   * of tasks and history patched (a page that cannot be is dropped, read again when asked for),
   * the pictures and child runs dropped (drawn or read again when asked for), stored values kept
   * but those the change wrote (carried). Undefined when the change cannot be applied (`reread`).
   */
  patchShared(run: RunObject, change: RunChange): RunObject | undefined {
    const old = run as SharedRun;
    if (change.reread || !old.shared || !old.settled || !old.jsonLoader || change.seq !== run.seq + 1) return undefined;
    const loader = nextLoader(old.jsonLoader, run, change, heldEvents(old.settled, change));
    const next = patchRunFields(run, change, loader);
    const shared = new Map<string, Promise<unknown>>();
    const settled = new Map<string, unknown>();
    const runDefinition = () => this.workflows.definition(run.tenantId, run.workflowId, run.version);
    const tools = { tenantId: run.tenantId, loader, runDefinition, pageWaits: (rows: readonly TaskObject[]) => this.waits.taskPageWaits(run.tenantId, rows) };
    for (const [key, value] of old.settled) {
      let patched: unknown;
      const [field, n, after, cols] = key.split(':');
      if (field === 'tasks' && after === '') patched = patchTaskPage(value as TaskObject[], Number(n), cols ? cols.split(',') : [], change, tools);
      else if (key === 'allTasks') patched = patchTaskPage(value as TaskObject[], Number.POSITIVE_INFINITY, [], change, tools);
      else if (field === 'history')
        patched = patchHistoryPage(
          value as RunEventObject[],
          Number(n),
          Number(after || 0),
          cols === '*' ? undefined : cols ? cols.split(',') : [],
          run,
          change,
          loader,
        );
      if (patched === undefined) continue;
      shared.set(key, Promise.resolve(patched));
      settled.set(key, patched);
    }
    return Object.assign(next, { shared, settled });
  }

  async list(
    p: Principal,
    filter: RunFilter | null | undefined,
    first: number | null | undefined,
    after: string | null | undefined,
    info?: GraphQLResolveInfo,
  ): Promise<RunConnection> {
    checkFirst(first, RUNS_PAGE_MAX);
    const page = await this.runs.listRuns(
      p.tenantId,
      runRowFilter(filter),
      first ?? undefined,
      after ?? undefined,
      sized(selectedFields(info, ['edges', 'node']), RUN_JSON_COLUMNS),
    );
    const batches = new Map<string, Promise<Map<string, SizedTask[]>>>();
    const ids = page.edges.map((e) => e.node.id);
    const pageTasks = (first: number, columns: typeof TASK_JSON_COLUMNS) => {
      const key = `${first}:${columns.join()}`;
      let batch = batches.get(key);
      if (!batch) batches.set(key, (batch = this.runs.firstTaskPages(p.tenantId, ids, first, columns)));
      return batch;
    };
    const queued = page.edges.filter((e) => e.node.status === 'QUEUED').map((e) => e.node.id);
    let waits: Promise<Map<string, RunWait>> | undefined;
    const pageWaits = () => (waits ??= this.flow.runWaits(p.tenantId, queued));
    return {
      edges: page.edges.map((e) => ({ cursor: e.cursor, node: Object.assign(toRunObject(e.node), { pageTasks, pageWaits }) as PagedRun })),
      pageInfo: {
        hasNextPage: page.pageInfo.hasNextPage,
        hasPreviousPage: false,
        startCursor: page.edges[0]?.cursor ?? null,
        endCursor: page.pageInfo.endCursor,
      },
    };
  }

  /** How many of the tenant's runs `filter` matches (the runs {@link list} pages through). */
  count(p: Principal, filter: RunFilter | null | undefined): Promise<number> {
    return this.runs.countRuns(p.tenantId, runRowFilter(filter));
  }

  /**
   * `value`, read with the row (a run's labels), charged to the answer's budget like a stored
   * value; once the answer was refused, `refused` (the answer is the refusal alone).
   */
  charged<T extends JsonValue>(context: object, info: GraphQLResolveInfo, value: T, refused: T): T {
    const { budget } = this.scope(context, info);
    if (budget.refused) return refused;
    budget.charge(jsonBytes(value));
    return value;
  }

  /**
   * Starts a run, or returns the one an idempotency key already started; WeftError CONFLICT when
   * that run was started with another workflow, version, input or config. `traceparent` (the request's header) is the trace the run
   * continues. A new RUNNING or QUEUED run is answered from the row the start wrote (no read;
   * its input and config as `jsonb` gives them back, {@link asJsonb}); an existing run, or
   * one that ended at its start, is read.
   */
  async start(p: Principal, input: StartRunInput, traceparent?: string): Promise<RunObject> {
    checkPriority(input.priority);
    const { runId, run: row } = await this.commands.startRun(p.tenantId, {
      workflowId: input.workflowId,
      version: input.version ?? undefined,
      input: input.input ?? undefined,
      config: input.config ?? undefined,
      startNodeId: input.startNodeId ?? undefined,
      idempotencyKey: input.idempotencyKey ?? undefined,
      priority: input.priority ?? undefined,
      labels: (input.labels ?? undefined) as RunLabels | undefined,
      ...(traceparent ? { traceparent } : {}),
    });
    if (row) return toRunObject({ ...row, input: asJsonb(row.input), config: asJsonb(row.config) });
    return this.load(p.tenantId, runId);
  }

  async signal(p: Principal, input: SendSignalInput): Promise<SignalResult> {
    assertRunId(input.runId);
    const { delivered } = await this.commands.sendSignal(p.tenantId, {
      runId: input.runId,
      name: input.name,
      payload: input.payload ?? undefined,
    });
    return { delivered };
  }

  /**
   * Cancels, pauses, resumes or retries run `input.runId` of the caller's tenant (`command`), then
   * reads it back as the mutation answers it.
   */
  async control(p: Principal, input: { runId: string }, command: RunControl): Promise<RunObject> {
    assertRunId(input.runId);
    await command(this.commands, p.tenantId);
    return this.load(p.tenantId, input.runId);
  }

  /**
   * A page of the run's tasks: at most `first` (1…1000, default 1000) after the task `after` (a
   * task id from a previous page), in creation order, a for_each node's iterations by index
   * right after its aggregate task ({@link orderTasks}); every task of a sensitive node,
   * iterations included, redacted. Input, output and error are read when asked for
   * ({@link storedJson}), their sizes with the rows when `info` selects them.
   */
  tasks(run: RunObject, first?: number | null, after?: string | null, info?: GraphQLResolveInfo): Promise<TaskObject[]> {
    const n = pageSize(first);
    const cols = sized(selectedFields(info), TASK_JSON_COLUMNS) ?? [];
    return once(run, `tasks:${n}:${after ?? ''}:${cols.join()}`, async () => {
      const paged = (run as PagedRun).pageTasks;
      const rows = paged && after == null ? ((await paged(n, cols)).get(run.id) ?? []) : await this.runs.taskPage(run.tenantId, run.id, n, after, cols);
      const hidden = await this.sensitive(run, rows);
      const loader = run.jsonLoader;
      const pageWaits = this.waits.taskPageWaits(run.tenantId, rows);
      const runDefinition = () => this.workflows.definition(run.tenantId, run.workflowId, run.version);
      return orderTasks(rows).map((t) =>
        Object.assign(toTaskObject(t, hidden.has(t.nodeId)), { pageWaits, runDefinition }, loader ? { jsonLoader: loader } : {}),
      );
    });
  }

  /** Why the run waits (a QUEUED run: its concurrency key's slots); null when it does not. */
  runWait(run: RunObject): Promise<Wait | null> {
    return this.waits.runWait(run);
  }

  /** Why the task waits ({@link RunWaits.taskWait}); null when it does not. */
  taskWait(task: TaskObject): Promise<Wait | null> {
    return this.waits.taskWait(task);
  }

  /** The run's child runs (started by its SUBWORKFLOW tasks), oldest first, at most the first 100 (RUN_CHILDREN_MAX). */
  children(run: RunObject, info?: GraphQLResolveInfo): Promise<RunObject[]> {
    const cols = sized(selectedFields(info), RUN_JSON_COLUMNS);
    return once(run, `children:${cols?.join() ?? '*'}`, async () => (await this.runs.childrenOfRun(run.tenantId, run.id, undefined, cols)).map(toRunObject));
  }

  /** A page of the run's history: at most `first` (1…1000, default 1000) events after seq `after`, oldest first. */
  history(run: RunObject, first?: number | null, after?: number | null, info?: GraphQLResolveInfo): Promise<RunEventObject[]> {
    const n = pageSize(first);
    const cols = sized(selectedFields(info), EVENT_JSON_COLUMNS);
    return once(run, `history:${n}:${after ?? ''}:${cols?.join() ?? '*'}`, async () => {
      const loader = run.jsonLoader;
      return (await this.runs.eventPage(run.tenantId, run.id, n, after, cols)).map((e) =>
        Object.assign(toRunEventObject(e), loader ? { jsonLoader: loader } : {}),
      );
    });
  }

  /**
   * A page of tasks for {@link allTasks}: for a shared run whose first page a reader already
   * asked for (with whatever sizes), that page.
   */
  private pictureTasks(run: RunObject, after: string | null): Promise<TaskObject[]> {
    const memo = (run as SharedRun).shared;
    if (memo && after === null) {
      for (const [key, page] of memo) if (key.startsWith(`tasks:${RUN_ITEMS_PAGE_MAX}::`)) return page as Promise<TaskObject[]>;
    }
    return this.tasks(run, RUN_ITEMS_PAGE_MAX, after);
  }

  /** Every task of the run, page by page (the first page shared with {@link tasks} when asked for it too). */
  private allTasks(run: RunObject): Promise<TaskObject[]> {
    return once(run, 'allTasks', async () => {
      const out: TaskObject[] = [];
      for (let after: string | null = null; ;) {
        const page: TaskObject[] = await this.pictureTasks(run, after);
        out.push(...page);
        if (page.length < RUN_ITEMS_PAGE_MAX) return out;
        after = page[page.length - 1]!.id;
      }
    });
  }

  /**
   * The run's DAG (its version's definition) with each reached node's status, taken from the
   * node's own task (a for_each node's aggregate), and a for_each node's iteration counts.
   */
  mermaid(run: RunObject): Promise<string> {
    return once(run, 'mermaid', async () => {
      const { def, tasks } = await this.picture(run);
      return toMermaid(def, tasks);
    });
  }

  /** The run's DAG as data: the same facts as {@link mermaid}, for drawings that lay it out themselves. */
  graph(run: RunObject): Promise<DagShape> {
    return once(run, 'graph', async () => {
      const { def, tasks } = await this.picture(run);
      return toDag(def, tasks);
    });
  }

  /**
   * What {@link mermaid} and {@link graph} draw: the version's definition and each node's state.
   * The states come from {@link tasks}, so a run object that is asked for its tasks and its
   * picture (a watched run, on every update) reads its task rows once, not once for each.
   */
  private picture(run: RunObject): Promise<{ def: MermaidGraph; tasks: Map<string, MermaidTask> }> {
    return once(run, 'picture', async () => {
      const [def, rows] = await Promise.all([this.workflows.definition(run.tenantId, run.workflowId, run.version), this.allTasks(run)]);
      return { def, tasks: mermaidTasks(rows) };
    });
  }

  private async sensitive(run: RunObject, rows: readonly { nodeId: string }[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    return sensitiveNodes(await this.workflows.definition(run.tenantId, run.workflowId, run.version));
  }
}

function textOf(value: JsonValue | null): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * The seqs of the history events on the pages of history `settled` holds, with `change`'s when
 * there is such a page (it may take the event): the events whose stored values the state after
 * `change` keeps.
 */
function heldEvents(settled: Map<string, unknown>, change: RunChange): Set<number> {
  const seqs = new Set<number>();
  for (const [key, page] of settled) {
    if (!key.startsWith('history:')) continue;
    seqs.add(change.seq);
    for (const e of page as RunEventObject[]) seqs.add(e.seq);
  }
  return seqs;
}

/** `read()`, or for a {@link SharedRun} the promise of the first reader (forgotten if it fails). */
function once<T>(run: RunObject, field: string, read: () => Promise<T>): Promise<T> {
  const { shared: memo, settled } = run as SharedRun;
  if (!memo) return read();
  let value = memo.get(field) as Promise<T> | undefined;
  if (!value) {
    const v = (value = read());
    memo.set(field, v);
    v.then(
      (got) => memo.get(field) === v && settled?.set(field, got),
      () => memo.get(field) === v && memo.delete(field),
    );
  }
  return value;
}

/**
 * The stored-value columns among the selected field names (each such field is named as its
 * column); undefined (size them all) when the selection is unknown.
 */
function sized<K extends string>(selected: Set<string> | undefined, columns: readonly K[]): K[] | undefined {
  return selected ? pickColumns(selected as Set<K>, columns) : undefined;
}

/** One of the run commands that act on an existing run, applied to tenant `tenantId` (see {@link RunsService.control}). */
export type RunControl = (commands: RunCommands, tenantId: string) => Promise<unknown>;
