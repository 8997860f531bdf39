import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Definition versions managed by tenant admins: a pinned default version per workflow
 * (`null` follows the latest), who published each version, and deprecation (new runs refused,
 * running ones continue). Also indexes API keys by their display prefix, the constant-time
 * lookup's candidate search.
 */
export class VersionManagement1764662400000 implements MigrationInterface {
  name = 'VersionManagement1764662400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE workflows ADD COLUMN default_version int;
      ALTER TABLE workflows ADD CONSTRAINT workflows_default_version_fk
        FOREIGN KEY (tenant_id, id, default_version) REFERENCES workflow_versions(tenant_id, workflow_id, version)
        DEFERRABLE INITIALLY DEFERRED;
      ALTER TABLE workflow_versions ADD COLUMN created_by text;
      ALTER TABLE workflow_versions ADD COLUMN created_by_key_id uuid;
      ALTER TABLE workflow_versions ADD COLUMN deprecated_at timestamptz;
      CREATE INDEX api_keys_key_prefix ON api_keys (key_prefix) WHERE revoked_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX api_keys_key_prefix;
      ALTER TABLE workflow_versions DROP COLUMN deprecated_at, DROP COLUMN created_by_key_id, DROP COLUMN created_by;
      ALTER TABLE workflows DROP CONSTRAINT workflows_default_version_fk, DROP COLUMN default_version;
    `);
  }
}
