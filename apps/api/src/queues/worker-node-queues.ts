import { isWorkerType, nodeQueue, placedNodes, type Problem, type WorkflowDefinition } from '@weft/engine';
import type { QueueAccess } from '@weft/persistence';

/** A worker node of a definition and the queue its tasks are dispatched on. */
export interface NodeQueue {
  nodeId: string;
  /** Where the queue comes from: `nodes[i].queue`, or `nodes[i].type` for a runtime's default queue. */
  path: string;
  queue: string;
}

/** The queue of every HTTP and CODE node of `definition` (DO_WHILE bodies' included), in definition order, then its `finally` step's. */
export function workerNodeQueues(definition: WorkflowDefinition): NodeQueue[] {
  const nodes = placedNodes(definition.nodes).flatMap(({ node: n, path }) =>
    isWorkerType(n.type) ? [{ nodeId: n.node_id, path: n.queue ? `${path}.queue` : `${path}.type`, queue: nodeQueue(n) }] : [],
  );
  const step = definition.finally;
  if (step && isWorkerType(step.type)) nodes.push({ nodeId: step.node_id, path: step.queue ? 'finally.queue' : 'finally.type', queue: nodeQueue(step) });
  return nodes;
}

/** One problem per node whose queue `access` says the tenant may not use (`denied`), at the node and naming the queue. */
export function reservedQueueProblems(nodes: readonly NodeQueue[], access: ReadonlyMap<string, QueueAccess>): Problem[] {
  return nodes
    .filter((n) => access.get(n.queue) === 'denied')
    .map((n) => ({ nodeId: n.nodeId, path: n.path, message: `queue "${n.queue}" is reserved for other tenants: this tenant may not use it` }));
}

/** The message of the error refusing `problems` ({@link reservedQueueProblems}): each node with its queue. */
export function reservedQueueMessage(nodes: readonly NodeQueue[], problems: readonly Problem[]): string {
  const named = problems.map((p) => `node ${p.nodeId} uses queue "${nodes.find((n) => n.nodeId === p.nodeId)!.queue}"`);
  return `invalid workflow definition: ${named.join(', ')}, reserved for other tenants`;
}

/**
 * One warning per node whose queue none of `served` (the queues live workers serve now) is, at
 * the node's queue (or type, for a runtime's default queue): its tasks would wait until a worker
 * serving that queue starts. A warning, not a refusal: workers may start after the publish.
 */
export function unservedQueueWarnings(nodes: readonly NodeQueue[], served: ReadonlySet<string>): Problem[] {
  return nodes
    .filter((n) => !served.has(n.queue))
    .map((n) => ({
      nodeId: n.nodeId,
      path: n.path,
      message: `node "${n.nodeId}" runs on queue "${n.queue}", which no live worker serves now; its tasks will wait until a worker serving "${n.queue}" starts`,
    }));
}
