import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `tenants`: one row per tenant; every tenant-owned row references it by `tenant_id`. */
@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id: string;

  @Column({ name: 'name', type: 'text' })
  name: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
