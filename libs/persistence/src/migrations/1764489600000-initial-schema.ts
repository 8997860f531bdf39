import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The initial schema. Every tenant-owned table carries `tenant_id` first in its keys and
 * indexes. Row-level security is `1764748800000-row-level-security.ts`'s; this migration only shapes
 * the tables.
 */
export class InitialSchema1764489600000 implements MigrationInterface {
  name = 'InitialSchema1764489600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tenants (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE api_keys (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        id uuid NOT NULL,
        name text NOT NULL,
        role text NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
        key_hash text NOT NULL,
        key_prefix text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE UNIQUE INDEX api_keys_key_hash ON api_keys (key_hash);

      CREATE TABLE workflows (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        id text NOT NULL,
        name text,
        latest_version int NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id)
      );

      CREATE TABLE workflow_versions (
        tenant_id uuid NOT NULL,
        workflow_id text NOT NULL,
        version int NOT NULL,
        definition jsonb NOT NULL,
        source text NOT NULL,
        checksum text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, workflow_id, version),
        FOREIGN KEY (tenant_id, workflow_id) REFERENCES workflows(tenant_id, id) ON DELETE CASCADE
      );

      CREATE TABLE runs (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        id uuid NOT NULL,
        workflow_id text NOT NULL,
        version int NOT NULL,
        status text NOT NULL,
        input jsonb NOT NULL DEFAULT '{}'::jsonb,
        config jsonb NOT NULL DEFAULT '{}'::jsonb,
        output jsonb,
        error text,
        idempotency_key text,
        start_node_id text,
        event_seq int NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, workflow_id, version) REFERENCES workflow_versions(tenant_id, workflow_id, version)
      );
      CREATE UNIQUE INDEX runs_idempotency_key ON runs (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at DESC, id DESC);
      CREATE INDEX runs_tenant_status ON runs (tenant_id, status);
      CREATE INDEX runs_tenant_workflow_created ON runs (tenant_id, workflow_id, created_at DESC, id DESC);

      CREATE TABLE tasks (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        run_id uuid NOT NULL,
        node_id text NOT NULL,
        node_type text NOT NULL,
        queue text,
        runtime text,
        status text NOT NULL,
        attempt int NOT NULL DEFAULT 0,
        input jsonb,
        output jsonb,
        error text,
        branches text[],
        wake_at timestamptz,
        awaited_signal text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, run_id) REFERENCES runs(tenant_id, id) ON DELETE CASCADE
      );
      CREATE UNIQUE INDEX tasks_run_node ON tasks (tenant_id, run_id, node_id);
      CREATE INDEX tasks_due_timers ON tasks (wake_at) WHERE status = 'WAITING' AND wake_at IS NOT NULL;

      CREATE TABLE signals (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        run_id uuid NOT NULL,
        name text NOT NULL,
        payload jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        consumed_at timestamptz,
        consumed_by_task_id uuid,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, run_id) REFERENCES runs(tenant_id, id) ON DELETE CASCADE
      );
      CREATE INDEX signals_pending ON signals (tenant_id, run_id, name, id) WHERE consumed_at IS NULL;

      CREATE TABLE run_events (
        tenant_id uuid NOT NULL,
        run_id uuid NOT NULL,
        seq int NOT NULL,
        type text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        node_id text,
        attempt int,
        payload jsonb,
        actions jsonb NOT NULL DEFAULT '[]'::jsonb,
        ignored text,
        error text,
        PRIMARY KEY (tenant_id, run_id, seq),
        FOREIGN KEY (tenant_id, run_id) REFERENCES runs(tenant_id, id) ON DELETE CASCADE
      );

      CREATE TABLE outbox (
        id bigserial PRIMARY KEY,
        tenant_id uuid NOT NULL,
        run_id uuid NOT NULL,
        task_id uuid NOT NULL,
        attempt int NOT NULL,
        queue text NOT NULL,
        not_before timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        claimed_at timestamptz,
        enqueued_at timestamptz
      );
      CREATE UNIQUE INDEX outbox_task ON outbox (tenant_id, task_id);
      CREATE INDEX outbox_unsent ON outbox (created_at, id) WHERE enqueued_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox, run_events, signals, tasks, runs, workflow_versions, workflows, api_keys, tenants`);
  }
}
