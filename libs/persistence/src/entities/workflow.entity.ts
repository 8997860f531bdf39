import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * `workflows`: a tenant's workflow, keyed by its user-chosen id; `latest_version` is 0 before the
 * first publish. `default_version` is the version an admin pinned as the default of new runs, or
 * null to follow the latest.
 */
@Entity({ name: 'workflows' })
export class WorkflowEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'id', type: 'text' })
  id: string;

  @Column({ name: 'name', type: 'text', nullable: true })
  name: string | null;

  @Column({ name: 'latest_version', type: 'int' })
  latestVersion: number;

  @Column({ name: 'default_version', type: 'int', nullable: true })
  defaultVersion: number | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
