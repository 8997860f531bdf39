import type { Json } from '../json.js';
import { sql } from '../sql.js';
import type { Database, Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** The version a new run would run on, as stored: the workflow's latest and pinned default, and the chosen version's row. */
export interface VersionChoice {
  /** 0 or absent when the workflow has no published version. */
  latestVersion: number;
  defaultVersion: number | null;
  /** The chosen version (requested, else default, else latest); null when that version does not exist. */
  version: number | null;
  deprecated: boolean | null;
  /** The database's `clock_timestamp()` as the choice was read (a new run's clock, without a statement of its own). */
  dbNow: Date;
}

/** A run's version and the deprecation of another version of its workflow a retry asks for. */
export interface RetryTarget {
  workflowId: string;
  version: number;
  deprecated: boolean;
}

/**
 * Workflow versions as runs start and retry on them (`workflows`, `workflow_versions`): which
 * version a run takes, a version's definition, whether a retry's version is deprecated.
 */
export class VersionLookupRepository extends TenantScopedRepository {
  constructor(db: Database | Transaction) {
    super(db);
  }

  /** The version `requested`, else the workflow's pinned default, else its latest; undefined for an unknown workflow. */
  async choose(tenantId: string, workflowId: string, requested: number | undefined): Promise<VersionChoice | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<VersionChoice>(
        m,
        `SELECT w.latest_version AS "latestVersion", w.default_version AS "defaultVersion", v.version, v.deprecated_at IS NOT NULL AS deprecated,
                clock_timestamp() AS "dbNow"
           FROM workflows w
           LEFT JOIN workflow_versions v
             ON v.tenant_id = w.tenant_id AND v.workflow_id = w.id AND v.version = COALESCE($3::int, w.default_version, w.latest_version)
          WHERE w.tenant_id = $1 AND w.id = $2`,
        [tenantId, workflowId, requested ?? null],
      );
      return r.rows[0];
    });
  }

  /** The stored definition of `version` of `workflowId`, or undefined. */
  async definition(tenantId: string, workflowId: string, version: number): Promise<Json | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ definition: Json }>(m, `SELECT definition FROM workflow_versions WHERE tenant_id = $1 AND workflow_id = $2 AND version = $3`, [
        tenantId,
        workflowId,
        version,
      ]);
      return r.rows[0]?.definition;
    });
  }

  /** Run `runId`'s workflow and version, and whether `version` of that workflow is deprecated; undefined when either is unknown. */
  async retryTarget(tenantId: string, runId: string, version: number): Promise<RetryTarget | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RetryTarget>(
        m,
        `SELECT r.workflow_id AS "workflowId", r.version, v.deprecated_at IS NOT NULL AS deprecated
           FROM runs r JOIN workflow_versions v ON v.tenant_id = r.tenant_id AND v.workflow_id = r.workflow_id AND v.version = $3
          WHERE r.tenant_id = $1 AND r.id = $2`,
        [tenantId, runId, version],
      );
      return r.rows[0];
    });
  }
}
