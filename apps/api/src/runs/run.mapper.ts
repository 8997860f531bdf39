import type { JsonValue, RunStatus, TaskStatus, WorkflowDefinition } from '@weft/engine';
import type { RunEntity, RunEventEntity, TaskEntity } from '@weft/persistence';
import type { RunEventObject, RunObject, TaskObject } from './run.object.js';

export function toRunObject(r: RunEntity): RunObject {
  return {
    tenantId: r.tenantId,
    id: r.id,
    status: r.status as RunStatus,
    workflowId: r.workflowId,
    version: r.version,
    input: r.input as JsonValue,
    config: r.config as JsonValue,
    output: r.output as JsonValue | null,
    error: r.error,
    startNodeId: r.startNodeId,
    idempotencyKey: r.idempotencyKey,
    seq: r.eventSeq,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
  };
}

/** Maps a task row; `redact` hides the input and output of a `sensitive: true` node (DESIGN §6). */
export function toTaskObject(t: TaskEntity, redact: boolean): TaskObject {
  const iteration = (t as TaskEntity & { iteration?: number | null }).iteration;
  return {
    id: t.id,
    nodeId: t.nodeId,
    nodeType: t.nodeType,
    status: t.status as TaskStatus,
    attempt: t.attempt,
    input: redact ? null : (t.input as JsonValue | null),
    output: redact ? null : (t.output as JsonValue | null),
    error: t.error,
    branches: t.branches,
    wakeAt: t.wakeAt,
    awaitedSignal: t.awaitedSignal,
    iteration: typeof iteration === 'number' ? iteration : null,
    queue: t.queue,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    finishedAt: t.finishedAt,
  };
}

export function toRunEventObject(e: RunEventEntity): RunEventObject {
  return {
    seq: e.seq,
    type: e.type,
    at: e.at,
    nodeId: e.nodeId,
    attempt: e.attempt,
    payload: e.payload as JsonValue | null,
    actions: (e.actions ?? []) as JsonValue,
    ignored: e.ignored,
    error: e.error,
  };
}

/** Node ids marked `sensitive: true` in the definition. */
export function sensitiveNodes(def: WorkflowDefinition): Set<string> {
  const out = new Set<string>();
  for (const n of def.nodes ?? []) if ((n as { sensitive?: unknown }).sensitive === true) out.add(n.node_id);
  return out;
}
