import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Json } from '../json.js';

/**
 * `run_events`: the run's history, one row per event the coordinator applied (`seq` 1, 2, … per
 * run): the event `type` (seed name, e.g. `NodeCompleted`), its payload, compact summaries of
 * the actions it produced, why it was ignored (stale report…) or why it was rejected (`error`).
 */
@Entity({ name: 'run_events' })
export class RunEventEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'run_id', type: 'uuid' })
  runId: string;

  @PrimaryColumn({ name: 'seq', type: 'int' })
  seq: number;

  @Column({ name: 'type', type: 'text' })
  type: string;

  @Column({ name: 'at', type: 'timestamptz' })
  at: Date;

  @Column({ name: 'node_id', type: 'text', nullable: true })
  nodeId: string | null;

  @Column({ name: 'attempt', type: 'int', nullable: true })
  attempt: number | null;

  @Column({ name: 'payload', type: 'jsonb', nullable: true })
  payload: Json | null;

  @Column({ name: 'actions', type: 'jsonb' })
  actions: Json;

  @Column({ name: 'ignored', type: 'text', nullable: true })
  ignored: string | null;

  @Column({ name: 'error', type: 'text', nullable: true })
  error: string | null;
}
