import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `workflows`: a tenant's workflow, keyed by its user-chosen id; `latest_version` is 0 before the first publish. */
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

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
