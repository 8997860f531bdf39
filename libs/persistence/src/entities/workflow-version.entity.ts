import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Json } from '../json.js';

/**
 * `workflow_versions`: one immutable published version (1, 2, …): the parsed definition as
 * `jsonb`, the source text as published (YAML or JSON) and its checksum.
 */
@Entity({ name: 'workflow_versions' })
export class WorkflowVersionEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'workflow_id', type: 'text' })
  workflowId: string;

  @PrimaryColumn({ name: 'version', type: 'int' })
  version: number;

  @Column({ name: 'definition', type: 'jsonb' })
  definition: Json;

  @Column({ name: 'source', type: 'text' })
  source: string;

  @Column({ name: 'checksum', type: 'text' })
  checksum: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
