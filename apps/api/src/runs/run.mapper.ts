import { allNodes, type JsonValue, type RunStatus, type TaskStatus, type WorkflowDefinition } from '@weft/engine';
import { apiRunStatus, type RunEntity, type RunEventEntity, type SizedEvent, type SizedRun, type SizedTask, type TaskEntity } from '@weft/persistence';
import type { RunEventObject, RunObject, TaskObject } from './run.object.js';

/**
 * Maps a run row (its tasks, history, mermaid and children are loaded by field resolvers), read
 * with its JSON values or with their sizes only.
 */
export function toRunObject(r: RunEntity | SizedRun): RunObject {
  const json =
    'jsonBytes' in r
      ? { jsonBytes: r.jsonBytes }
      : { input: r.input as JsonValue, config: r.config as JsonValue, output: r.output as JsonValue | null, error: r.error };
  return {
    ...json,
    tenantId: r.tenantId,
    id: r.id,
    status: apiRunStatus(r) as RunStatus,
    pausedAt: r.pausedAt ?? null,
    pauseReason: r.pauseReason ?? null,
    deadlineAt: r.deadlineAt ?? null,
    workflowId: r.workflowId,
    version: r.version,
    startNodeId: r.startNodeId,
    idempotencyKey: r.idempotencyKey,
    parentRunId: r.parentRunId ?? null,
    parentTaskId: r.parentTaskId ?? null,
    scheduleId: r.scheduleId ?? null,
    nominalTime: r.nominalTime ?? null,
    depth: r.depth ?? 0,
    priority: r.priority ?? 3,
    concurrencyKey: r.concurrencyKey ?? null,
    labels: r.labels ?? {},
    seq: r.eventSeq,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
  };
}

/**
 * Maps a task row (read with its JSON values or their sizes); `redact` hides the input and output
 * of a `sensitive: true` node, which the caller decides by node id, so a `for_each` node's
 * iteration rows are hidden with it.
 */
export function toTaskObject(t: TaskEntity | SizedTask, redact: boolean): TaskObject {
  const json = 'jsonBytes' in t ? { jsonBytes: t.jsonBytes } : { input: t.input as JsonValue | null, output: t.output as JsonValue | null, error: t.error };
  return {
    ...json,
    tenantId: t.tenantId,
    redacted: redact,
    id: t.id,
    nodeId: t.nodeId,
    nodeType: t.nodeType,
    status: t.status as TaskStatus,
    attempt: t.attempt,
    attemptLimit: t.attemptLimit ?? null,
    branches: t.branches,
    wakeAt: t.wakeAt,
    awaitedSignal: t.awaitedSignal,
    iteration: t.iteration ?? null,
    loopIteration: t.loopIteration ?? null,
    queue: t.queue,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    finishedAt: t.finishedAt,
  };
}

export function toRunEventObject(e: RunEventEntity | SizedEvent): RunEventObject {
  const json =
    'jsonBytes' in e ? { jsonBytes: e.jsonBytes } : { payload: e.payload as JsonValue | null, actions: (e.actions ?? []) as JsonValue, error: e.error };
  return {
    ...json,
    tenantId: e.tenantId,
    runId: e.runId,
    seq: e.seq,
    type: e.type,
    at: e.at,
    nodeId: e.nodeId,
    attempt: e.attempt,
    ignored: e.ignored,
  };
}

/** Node ids marked `sensitive: true` in the definition (its DO_WHILE bodies' and its `finally` step's included). */
export function sensitiveNodes(def: WorkflowDefinition): Set<string> {
  const out = new Set<string>();
  for (const n of [...allNodes(def.nodes), ...(def.finally ? [def.finally] : [])]) if ((n as { sensitive?: unknown }).sensitive === true) out.add(n.node_id);
  return out;
}

/**
 * A run's task rows in display order: `rows` as given (creation order) for the tasks without an
 * iteration, each `for_each` node's iteration rows right after its aggregate task, by iteration
 * index. Iteration rows whose aggregate is missing stay together, by index, where the first of
 * them was. Needed because one event creates an aggregate and its iterations with the same
 * `created_at`, so creation order alone ties them (broken by random ids). Returns a new array.
 */
export function orderTasks<T extends { nodeId: string; iteration: number | null }>(rows: readonly T[]): T[] {
  const iterations = new Map<string, T[]>();
  const aggregates = new Set<string>();
  for (const t of rows) {
    if (t.iteration == null) aggregates.add(t.nodeId);
    else {
      const list = iterations.get(t.nodeId);
      if (list) list.push(t);
      else iterations.set(t.nodeId, [t]);
    }
  }
  for (const list of iterations.values()) list.sort((a, b) => a.iteration! - b.iteration!);
  const out: T[] = [];
  const placed = new Set<string>();
  const place = (nodeId: string) => {
    if (placed.has(nodeId)) return;
    placed.add(nodeId);
    out.push(...(iterations.get(nodeId) ?? []));
  };
  for (const t of rows) {
    if (t.iteration == null) {
      out.push(t);
      place(t.nodeId);
    } else if (!aggregates.has(t.nodeId)) place(t.nodeId);
  }
  return out;
}
