import { Field, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import type { TaskStatus } from '@weft/engine';
import { TaskStatusEnum } from './statuses.js';

/** Whether the run went along an edge. */
export const EdgeStateEnum = { TAKEN: 'TAKEN', SKIPPED: 'SKIPPED', OPEN: 'OPEN' } as const;

registerEnumType(EdgeStateEnum, {
  name: 'EdgeState',
  description:
    'TAKEN: its source settled, the edge applied (after success, within the recorded branches; an on_error edge after a failure) and its target was reached. SKIPPED: its source settled and the edge did not apply, or its target was skipped. OPEN: not decided yet.',
});

@ObjectType('StatusCount', { description: "How many of a for_each node's iterations are in one status." })
export class StatusCountObject {
  @Field(() => TaskStatusEnum)
  status: TaskStatus;

  @Field(() => Int)
  count: number;
}

@ObjectType('GraphNode', { description: 'A node of the DAG, with its status in a run.' })
export class GraphNodeObject {
  @Field(() => String, { description: 'The node_id.' })
  id: string;

  @Field(() => String, { description: 'HTTP, CODE, SWITCH, FORK, JOIN, WAIT, WAIT_FOR_EVENT, SUBWORKFLOW or DO_WHILE.' })
  type: string;

  @Field(() => TaskStatusEnum, {
    nullable: true,
    description: "The status of the node's own task (a for_each node's aggregate); null while unreached, and always on a version's graph.",
  })
  status: TaskStatus | null;

  @Field(() => Boolean, { description: 'True for a for_each (fan-out) node.' })
  forEach: boolean;

  @Field(() => [StatusCountObject], {
    nullable: true,
    description: "A reached for_each node's iterations per status (empty before any); null for other nodes and unreached ones.",
  })
  iterations: StatusCountObject[] | null;

  @Field(() => String, {
    nullable: true,
    description: "A SUBWORKFLOW node's child workflow (`payments`, or `payments@2` with a version) when its spec names it without a template.",
  })
  childWorkflow: string | null;

  @Field(() => String, {
    nullable: true,
    description: "For a node of a DO_WHILE node's body: the DO_WHILE node's id (body nodes follow their loop in `nodes`); null for a top-level node.",
  })
  loop: string | null;

  @Field(() => Int, { nullable: true, description: "For a DO_WHILE node: its max_iterations; null for other nodes (or one that isn't an integer)." })
  maxIterations: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      "In a run, 0-based: for a reached DO_WHILE body node, the loop iteration its status comes from (its latest); for a reached DO_WHILE node, the iteration running or last run. Null otherwise, and always on a version's graph.",
  })
  loopIteration: number | null;
}

@ObjectType('GraphEdge', { description: 'An edge of the DAG, with whether a run went along it.' })
export class GraphEdgeObject {
  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => String, { nullable: true, description: 'The condition, or `on error` for an on_error edge; null for a plain edge.' })
  label: string | null;

  @Field(() => Boolean)
  onError: boolean;

  @Field(() => EdgeStateEnum, { description: "OPEN on a version's graph." })
  state: 'TAKEN' | 'SKIPPED' | 'OPEN';
}

@ObjectType('Graph', { description: 'A DAG as data, in definition order, for drawings that lay it out themselves.' })
export class GraphObject {
  @Field(() => [GraphNodeObject])
  nodes: GraphNodeObject[];

  @Field(() => [GraphEdgeObject])
  edges: GraphEdgeObject[];
}
