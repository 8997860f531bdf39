import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import type { JsonValue, RunStatus, TaskStatus, WorkflowDefinition } from '@weft/engine';
import type { EventJsonColumn, JsonBytes, RunJsonColumn, RunWait, TaskJsonColumn, TaskWait } from '@weft/persistence';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import type { StoredJsonLoader } from './stored-json.loader.js';
import { RunStatusEnum, TaskStatusEnum } from '../common/statuses.js';

@ObjectType('Run', { description: 'One run of a workflow version; tasks, history, mermaid and children are loaded when asked for.' })
export class RunObject {
  /** The owning tenant: field resolvers load tasks and history with it. Not exposed. */
  tenantId: string;

  @Field(() => ID)
  id: string;

  @Field(() => RunStatusEnum)
  status: RunStatus;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'When the run was paused, while it is PAUSED; null otherwise.' })
  pausedAt: Date | null;

  @Field(() => String, {
    nullable: true,
    description:
      'Why the run is PAUSED: the reason given to pauseRun, `parent run <id> paused`, or `node <id> exhausted its <n> attempts: <error>`; null otherwise.',
  })
  pauseReason: string | null;

  @Field(() => GraphQLDateTime, {
    nullable: true,
    description:
      "When the run times out: its definition's timeout_seconds after it started (left QUEUED) or was last retried, on the database's clock; null without timeout_seconds. Kept once the run ended.",
  })
  deadlineAt: Date | null;

  @Field(() => String)
  workflowId: string;

  @Field(() => Int)
  version: number;

  /**
   * input, config and output (GraphQL fields resolved by RunsResolver): the values when the row
   * was read with them, or else their sizes, to charge before they are read.
   */
  input?: JsonValue | null;
  config?: JsonValue | null;
  output?: JsonValue | null;
  jsonBytes?: JsonBytes<RunJsonColumn>;
  /** Reads the values for every reader of a shared run state (its subscribers); else the answer's own. */
  jsonLoader?: StoredJsonLoader;

  /** Why the run failed or was cancelled (resolved by RunsResolver), when read with the row. */
  error?: string | null;

  @Field(() => String, { nullable: true })
  startNodeId: string | null;

  @Field(() => String, { nullable: true })
  idempotencyKey: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'For a child run: the run whose SUBWORKFLOW task started it (same tenant). Null for a run started over the API.',
  })
  parentRunId: string | null;

  @Field(() => ID, {
    nullable: true,
    description: "For a child run: the id of the parent run's SUBWORKFLOW task (Task.id) that started it. Null for a run started over the API.",
  })
  parentTaskId: string | null;

  @Field(() => ID, { nullable: true, description: 'The schedule that started this run; null for a run not started by a schedule.' })
  scheduleId: string | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'The nominal fire time the schedule started this run for.' })
  nominalTime: Date | null;

  @Field(() => Int, { description: "Nesting depth: 0 for a run started over the API, the parent's depth + 1 for a child run." })
  depth: number;

  @Field(() => Int, {
    description: "Dispatch priority of the run's tasks within its tenant, 1 (first) to 5: startRun's priority, else the definition's, else 3.",
  })
  priority: number;

  @Field(() => String, {
    nullable: true,
    description: 'The concurrency key the run\'s start resolved ("" for a workflow\'s one group); null without concurrency.',
  })
  concurrencyKey: string | null;

  /** The run's labels (GraphQL field resolved by RunsResolver, which charges their size to the answer). */
  labels: Record<string, string>;

  /** The waits of the QUEUED runs of the page this run was read with (one read for the page); else read for this run. */
  pageWaits?: () => Promise<Map<string, RunWait>>;

  @Field(() => Int, { description: 'Sequence number of the last applied event (0 before the first).' })
  seq: number;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime)
  updatedAt: Date;

  @Field(() => GraphQLDateTime, { nullable: true })
  finishedAt: Date | null;
}

@ObjectType('Task', {
  description:
    "The task of one reached node (iteration null); a retry bumps attempt on the same task. A for_each node also has one task per element (iteration 0, 1, …), and its own task (iteration null) is the aggregate holding the node's status and merged output.",
})
export class TaskObject {
  /** The owning tenant, to read the JSON values with. Not exposed. */
  tenantId: string;
  /** True for a task of a `sensitive: true` node: input and output answer null. */
  redacted: boolean;
  /** Sizes of input and output when the row was read without them. */
  jsonBytes?: JsonBytes<TaskJsonColumn>;
  /** Reads the values for every reader of a shared run state (its subscribers); else the answer's own. */
  jsonLoader?: StoredJsonLoader;

  @Field(() => ID)
  id: string;

  @Field(() => String)
  nodeId: string;

  @Field(() => String)
  nodeType: string;

  @Field(() => TaskStatusEnum)
  status: TaskStatus;

  @Field(() => Int, {
    description:
      "The current execution's attempt, counted from 0: 0 is the first execution, 2 the third. A node executes at most its retry.max_attempts times, so the last attempt is max_attempts - 1.",
  })
  attempt: number;

  @Field(() => Int, {
    nullable: true,
    description:
      "How many executions the task may make in all when it was granted more than its node's retry.max_attempts: a for_each iteration run again by a retry with failedIterationsOnly, or a task resumed after its attempts ran out (on_exhausted: pause). Null while the node's retry.max_attempts applies.",
  })
  attemptLimit: number | null;

  /** input, output and error (resolved by TaskFieldsResolver) when read with the row. */
  input?: JsonValue | null;
  output?: JsonValue | null;
  error?: string | null;

  @Field(() => [String], { nullable: true, description: 'Successors a SWITCH (or conditional edges) selected.' })
  branches: string[] | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'When a WAITING node wakes up (timer or timeout).' })
  wakeAt: Date | null;

  @Field(() => String, { nullable: true, description: 'The signal a WAITING WAIT_FOR_EVENT node waits for.' })
  awaitedSignal: string | null;

  @Field(() => Int, {
    nullable: true,
    description:
      "The 0-based element index of a for_each iteration task; null for a node's own task (a for_each node's aggregate). Iteration statuses add WAITING (held back by max_concurrency) and SKIPPED (never started because more iterations failed for good than the node's tolerated_failures allows, default 0).",
  })
  iteration: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      "A DO_WHILE body node's task: the 0-based loop iteration it belongs to (every iteration's tasks are kept). A DO_WHILE node's own task: the iteration running, or the last one run once it ended (its input is the previous iteration's output, null in the first). Null for every other task.",
  })
  loopIteration: number | null;

  @Field(() => String, { nullable: true })
  queue: string | null;

  /** The backlog rows of the QUEUED tasks of the page this task was read with (one read for the page). */
  pageWaits?: () => Promise<Map<string, TaskWait>>;

  /** The definition of the run's version (read when a SWITCH task's decision is asked for). */
  runDefinition?: () => Promise<WorkflowDefinition>;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime)
  updatedAt: Date;

  @Field(() => GraphQLDateTime, { nullable: true })
  finishedAt: Date | null;
}

@ObjectType('RunEvent', { description: 'One event the coordinator applied to the run, with the actions it produced.' })
export class RunEventObject {
  /** The owning tenant and run, to read the JSON values with. Not exposed. */
  tenantId: string;
  runId: string;
  /** Sizes of payload and actions when the row was read without them. */
  jsonBytes?: JsonBytes<EventJsonColumn>;
  jsonLoader?: StoredJsonLoader;

  @Field(() => Int)
  seq: number;

  @Field(() => String, { description: "The seed's event name, e.g. NodeCompleted." })
  type: string;

  @Field(() => GraphQLDateTime)
  at: Date;

  @Field(() => String, { nullable: true })
  nodeId: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'The attempt a worker report (NodeCompleted, NodeFailed) is for, counted from 0 as Task.attempt is; null for the other events.',
  })
  attempt: number | null;

  /** payload, actions and error (resolved by RunEventFieldsResolver) when read with the row. */
  payload?: JsonValue | null;
  actions?: JsonValue;
  error?: string | null;

  @Field(() => String, { nullable: true, description: 'Why the event changed nothing (e.g. a stale attempt).' })
  ignored: string | null;
}

@ObjectType('RunEdge')
export class RunEdge {
  @Field(() => String)
  cursor: string;

  @Field(() => RunObject)
  node: RunObject;
}

@ObjectType('PageInfo')
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage: boolean;

  @Field(() => Boolean)
  hasPreviousPage: boolean;

  @Field(() => String, { nullable: true })
  startCursor: string | null;

  @Field(() => String, { nullable: true })
  endCursor: string | null;
}

@ObjectType('RunConnection')
export class RunConnection {
  @Field(() => [RunEdge])
  edges: RunEdge[];

  @Field(() => PageInfo)
  pageInfo: PageInfo;
}

@ObjectType('SignalResult')
export class SignalResult {
  @Field(() => Boolean, { description: 'True when a waiting node consumed the signal; false when it was buffered.' })
  delivered: boolean;
}
