import type { Graph } from '../../api/graph.js';

/** Run statuses (RunStatus). */
export const RUN_STATUSES = ['QUEUED', 'PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** A JSON value as the API sends it (the JSON scalar). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A row of the runs list. */
export interface RunSummary {
  id: string;
  status: string;
  workflowId: string;
  version: number;
  seq: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface RunsPage {
  edges: { cursor: string; node: RunSummary }[];
  pageInfo: { endCursor: string | null; hasNextPage: boolean };
}

/** What `runChanged` says about any run of the tenant. */
export interface RunChange {
  runId: string;
  status: string;
  seq: number;
}

export interface Task {
  id: string;
  nodeId: string;
  nodeType: string;
  status: string;
  attempt: number;
  iteration: number | null;
  input: Json | undefined;
  output: Json | undefined;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  wakeAt: string | null;
  awaitedSignal: string | null;
  branches: string[] | null;
  queue: string | null;
  /** Why a QUEUED task waits (WaitReason); null for a retry's backoff, which waitDetail explains, and when it does not wait. */
  waitReason: string | null;
  waitDetail: string | null;
}

export interface RunEvent {
  seq: number;
  type: string;
  nodeId: string | null;
  attempt: number | null;
  at: string;
  payload: Json | undefined;
  actions: Json;
  ignored: string | null;
  error: string | null;
}

export interface ChildRun {
  id: string;
  status: string;
  parentTaskId: string | null;
  workflowId: string;
}

/** A run with everything its page shows. */
export interface RunDetail extends RunSummary {
  input: Json | undefined;
  config: Json | undefined;
  output: Json | undefined;
  error: string | null;
  parentRunId: string | null;
  parentTaskId: string | null;
  depth: number;
  /** Dispatch priority of the run's tasks, 1 (first) to 5. */
  priority: number;
  /** The concurrency key the run's start resolved; null without concurrency. */
  concurrencyKey: string | null;
  /** Why a QUEUED run waits (WaitReason) and the sentence saying so; null when it does not wait. */
  waitReason: string | null;
  waitDetail: string | null;
  /** The schedule that started the run, and the fire time it was started for. */
  scheduleId: string | null;
  nominalTime: string | null;
  tasks: Task[];
  history: RunEvent[];
  children: ChildRun[];
  graph: Graph;
}

/** One execution of a worker task and what it printed or did (TaskAttempt); `attempt` counts from 0, as the API does. */
export interface TaskAttempt {
  attempt: number;
  logs: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
}
