import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * `outbox`: a task attempt in its queue's backlog, written in the event's transaction. Keyed
 * `(tenant_id, id)`, the id from a sequence; one row per task (unique `(tenant_id, task_id)`),
 * rewritten on each dispatch. `enqueued_at` is set when fair dispatch admits the attempt (its job
 * is then enqueued on Bull), or when the row turned out stale; until then the row is ready, or
 * held (`hold_reason`) until `held_until`.
 */
@Entity({ name: 'outbox' })
export class OutboxEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryGeneratedColumn({ name: 'id', type: 'bigint' })
  id: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId: string;

  @Column({ name: 'task_id', type: 'uuid' })
  taskId: string;

  @Column({ name: 'attempt', type: 'int' })
  attempt: number;

  @Column({ name: 'queue', type: 'text' })
  queue: string;

  @Column({ name: 'not_before', type: 'timestamptz' })
  notBefore: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'claimed_at', type: 'timestamptz', nullable: true })
  claimedAt: Date | null;

  @Column({ name: 'enqueued_at', type: 'timestamptz', nullable: true })
  enqueuedAt: Date | null;

  /** The run's priority (1 first), the backlog's order within a tenant. */
  @Column({ name: 'priority', type: 'smallint', default: 3 })
  priority: number;

  /** Why a backlog row is not ready (`BACKOFF`, `CONCURRENCY_LIMIT`, `RATE_LIMIT`), said as a sentence, until when; NULL when ready. */
  @Column({ name: 'hold_reason', type: 'text', nullable: true })
  holdReason: string | null;

  @Column({ name: 'hold_detail', type: 'text', nullable: true })
  holdDetail: string | null;

  @Column({ name: 'held_until', type: 'timestamptz', nullable: true })
  heldUntil: Date | null;

  /**
   * When the attempt fails if no worker started it by then (its node's `schedule_to_start_seconds`
   * after it became ready; a pause adds its length); NULL without one, and once it is void.
   */
  @Column({ name: 'start_by', type: 'timestamptz', nullable: true })
  startBy: Date | null;

  /** The reason the row was last held for (kept once it is ready again), for the wait's metric; NULL if never held by a limit. */
  @Column({ name: 'last_hold', type: 'text', nullable: true })
  lastHold: string | null;
}
