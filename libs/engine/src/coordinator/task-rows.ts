/** The `tasks` row a CreateTask writes, as the action writer buffers it. */
import type { NewTask } from '@weft/persistence';
import { isWorkerType, nodeQueue, TaskStatus, type CreateTask, type WorkflowNode } from '../index.js';

/** Task statuses a CreateTask can carry that are already final. */
const FINAL = new Set<string>([TaskStatus.Completed, TaskStatus.Failed, TaskStatus.Skipped, TaskStatus.Cancelled]);

/** Nodes dispatched to a worker queue (HTTP and CODE). */
export function isWorkerNode(n: WorkflowNode): boolean {
  return isWorkerType(n.type);
}

/** The `tasks` row of a CreateTask (no iteration). */
export function taskRow(c: CreateTask): NewTask {
  return {
    id: c.taskId,
    nodeId: c.node.node_id,
    nodeType: c.node.type,
    queue: isWorkerNode(c.node) ? nodeQueue(c.node) : null,
    runtime: c.node.runtime ?? null,
    status: c.status,
    iteration: null,
    loopIteration: c.loopIteration ?? null,
    input: c.input ?? null,
    output: c.output ?? null,
    error: c.error ?? null,
    branches: c.branches ?? null,
    wakeAt: c.wakeAt ?? null,
    awaitedSignal: c.awaitedSignal ?? null,
    finished: FINAL.has(c.status),
  };
}

/** Applies `change` to the buffered row of task `taskId` in `created` (this event's new rows); false when there is none. */
export function amendCreated(created: ReadonlyMap<string, NewTask>, taskId: string, change: Partial<NewTask>): boolean {
  const row = created.get(taskId);
  if (row) Object.assign(row, change);
  return row !== undefined;
}
