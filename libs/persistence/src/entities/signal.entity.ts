import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Json } from '../json.js';

/**
 * `signals`: a signal sent to a run before any node waited for it (the machine's BufferSignal action);
 * consumed oldest first (ids are UUIDv7) by a WAIT_FOR_EVENT task, which sets `consumed_at`.
 */
@Entity({ name: 'signals' })
export class SignalEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId: string;

  @Column({ name: 'name', type: 'text' })
  name: string;

  @Column({ name: 'payload', type: 'jsonb', nullable: true })
  payload: Json | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt: Date | null;

  @Column({ name: 'consumed_by_task_id', type: 'uuid', nullable: true })
  consumedByTaskId: string | null;
}
