import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The role an API key carries; the API's roles guard says which operations each role may call. */
export type ApiKeyRole = 'admin' | 'operator' | 'viewer';

/**
 * `api_keys`: a tenant's API keys, stored as the SHA-256 hex hash of the raw key (unique within
 * the tenant; a key is 32 random bytes) plus a short prefix for display. A key with `revoked_at` no longer authenticates.
 */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id: string;

  @Column({ name: 'name', type: 'text' })
  name: string;

  @Column({ name: 'role', type: 'text' })
  role: ApiKeyRole;

  @Column({ name: 'key_hash', type: 'text' })
  keyHash: string;

  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
