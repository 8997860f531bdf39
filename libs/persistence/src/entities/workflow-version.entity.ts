import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Json } from '../json.js';

/**
 * `workflow_versions`: one immutable published version (1, 2, …): the parsed definition as
 * `jsonb`, the source text as published (YAML or JSON) and its checksum; who published it (the
 * API key's name and id at the time, null when published without a key) and, once an admin
 * deprecated it, when (new runs on a deprecated version are refused; running ones continue).
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

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_by_key_id', type: 'uuid', nullable: true })
  createdByKeyId: string | null;

  @Column({ name: 'deprecated_at', type: 'timestamptz', nullable: true })
  deprecatedAt: Date | null;
}
