import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Json } from '../json.js';

/**
 * `tasks`: one per reached node of a run (unique `(tenant_id, run_id, node_id)` among the tasks
 * without an `iteration`), plus, for a `for_each` node, one per element (`iteration` 0, 1, …; the
 * node's own task is then the aggregate: never dispatched, `queue` NULL); a retry bumps
 * `attempt` (0-based) on the same row. `input` is the node's resolved spec, stored once;
 * `branches` a SWITCH's recorded decision; `wake_at` a WAITING node's timer or timeout;
 * `queue`/`runtime` where a worker node is dispatched; `leaseExpiresAt`/`leaseToken` the lease of a
 * dispatched worker attempt (see migration `1764835200000-task-leases.ts`).
 */
@Entity({ name: 'tasks' })
export class TaskEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId: string;

  @Column({ name: 'node_id', type: 'text' })
  nodeId: string;

  @Column({ name: 'node_type', type: 'text' })
  nodeType: string;

  @Column({ name: 'queue', type: 'text', nullable: true })
  queue: string | null;

  @Column({ name: 'runtime', type: 'text', nullable: true })
  runtime: string | null;

  @Column({ name: 'status', type: 'text' })
  status: string;

  @Column({ name: 'attempt', type: 'int' })
  attempt: number;

  @Column({ name: 'input', type: 'jsonb', nullable: true })
  input: Json | null;

  @Column({ name: 'output', type: 'jsonb', nullable: true })
  output: Json | null;

  @Column({ name: 'error', type: 'text', nullable: true })
  error: string | null;

  /** When a waiting SUBWORKFLOW task may start its next attempt's child (retry backoff); null otherwise. */
  @Column({ name: 'retry_at', type: 'timestamptz', nullable: true })
  retryAt: Date | null;

  /** The attempts the task may make in all once a resume granted its node more than `max_attempts`; null otherwise. */
  @Column({ name: 'attempt_limit', type: 'int', nullable: true })
  attemptLimit: number | null;

  /** 0-based element index of a `for_each` iteration task; null otherwise. */
  @Column({ name: 'iteration', type: 'int', nullable: true })
  iteration: number | null;

  /** A DO_WHILE body node's task: its 0-based loop iteration; a DO_WHILE node's task: the iteration running (or last run); null otherwise. */
  @Column({ name: 'loop_iteration', type: 'int', nullable: true })
  loopIteration: number | null;

  /** True on the tasks of a DO_WHILE iteration another one followed: kept for reading, no longer the run's state. */
  @Column({ name: 'loop_archived', type: 'boolean', default: false })
  loopArchived: boolean;

  @Column({ name: 'branches', type: 'text', array: true, nullable: true })
  branches: string[] | null;

  @Column({ name: 'wake_at', type: 'timestamptz', nullable: true })
  wakeAt: Date | null;

  @Column({ name: 'awaited_signal', type: 'text', nullable: true })
  awaitedSignal: string | null;

  /** Token of the worker execution that claimed the current attempt; NULL until claimed or after a re-dispatch. */
  @Column({ name: 'lease_token', type: 'uuid', nullable: true })
  leaseToken: string | null;

  /** The node's concurrency key this attempt holds a slot of while PENDING or RUNNING, and its limit; NULL without one. */
  @Column({ name: 'flow_concurrency_key', type: 'text', nullable: true })
  flowConcurrencyKey: string | null;

  @Column({ name: 'flow_concurrency_limit', type: 'int', nullable: true })
  flowConcurrencyLimit: number | null;

  /** The node's rate-limit key, and at most `flowRateLimit` starts per `flowRatePerSeconds`; NULL without one. */
  @Column({ name: 'flow_rate_key', type: 'text', nullable: true })
  flowRateKey: string | null;

  @Column({ name: 'flow_rate_limit', type: 'int', nullable: true })
  flowRateLimit: number | null;

  @Column({ name: 'flow_rate_per_seconds', type: 'int', nullable: true })
  flowRatePerSeconds: number | null;

  /** Until when the current attempt of an active worker task is accounted for (database clock). */
  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
