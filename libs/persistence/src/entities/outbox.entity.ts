import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * `outbox`: a task attempt to put on its queue, written in the event's transaction and enqueued
 * after commit (nothing touches Redis inside a transaction). Keyed `(tenant_id, id)`, the id from
 * a sequence; one row per task (unique `(tenant_id, task_id)`), rewritten on each dispatch; `enqueued_at` is set once Bull accepted
 * the job, `claimed_at` while a relay is enqueuing it.
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
}
