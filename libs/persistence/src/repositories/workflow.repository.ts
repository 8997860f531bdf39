import type { DataSource, EntityManager } from 'typeorm';
import { WorkflowVersionEntity } from '../entities/workflow-version.entity.js';
import type { Json } from '../json.js';
import { jsonb, sql } from '../sql.js';
import { isUuid } from '../tenant-transaction.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** What {@link WorkflowRepository.publishVersion} stores. */
export interface PublishVersionInput {
  workflowId: string;
  /** Display name; kept from the previous version when omitted. */
  name?: string;
  /** The parsed, validated definition. */
  definition: Json;
  /** The text as published (YAML or JSON). */
  source: string;
  /** Checksum of the canonical definition: equal checksums mean identical definitions. */
  checksum: string;
  /**
   * The API key publishing it (a UUID of the same tenant): stored as `created_by_key_id`, and the
   * key's name at this moment as `created_by`. Omitted: both stay null.
   */
  createdByKeyId?: string;
}

/**
 * A version as {@link WorkflowRepository.publishVersion} returns it: the stored row, and
 * `created: false` when the definition was identical to the latest version's, which is
 * returned instead of a new one.
 */
export type PublishedVersion = WorkflowVersionEntity & VersionBytes & { created: boolean };

/**
 * Bytes of a version's definition as PostgreSQL prints it (`octet_length(definition::text)`,
 * stored when it is written) and of its source text: what answering with them costs, known
 * without reading them.
 */
export interface VersionBytes {
  definitionBytes: number;
  sourceBytes: number;
}

/** A version without its (possibly large) definition and source text, with their sizes. */
export type WorkflowVersionInfo = Omit<WorkflowVersionEntity, 'definition' | 'source'> & VersionBytes;

/** A workflow with its latest version (`null` only if it was never published). */
export interface WorkflowSummary {
  workflowId: string;
  name: string | null;
  latestVersion: number;
  /** The version pinned as the default of new runs; null when the default follows the latest. */
  pinnedVersion: number | null;
  /** The version a run started without one uses: `pinnedVersion ?? latestVersion`. */
  defaultVersion: number;
  createdAt: Date;
  updatedAt: Date;
  latest: WorkflowVersionEntity | null;
}

/**
 * The outcome of {@link WorkflowRepository.setDefaultVersion}: the updated workflow, or why
 * nothing changed — no such workflow, no such version, or the version is deprecated.
 */
export type SetDefaultVersionResult = { ok: true; workflow: WorkflowSummary } | { ok: false; reason: 'NO_WORKFLOW' | 'NO_VERSION' | 'DEPRECATED' };

interface WorkflowRow {
  id: string;
  name: string | null;
  latest_version: number;
  default_version: number | null;
  created_at: Date;
  updated_at: Date;
  v_definition: Json | null;
  v_source: string | null;
  v_checksum: string | null;
  v_created_at: Date | null;
  v_created_by: string | null;
  v_created_by_key_id: string | null;
  v_deprecated_at: Date | null;
}

interface VersionRow {
  workflow_id: string;
  version: number;
  checksum: string;
  created_at: Date;
  created_by: string | null;
  created_by_key_id: string | null;
  deprecated_at: Date | null;
  definition_bytes: number;
  source_bytes: number;
  definition?: Json;
  source?: string;
}

const SUMMARY_SELECT = `
  SELECT w.id, w.name, w.latest_version, w.default_version, w.created_at, w.updated_at,
         v.definition AS v_definition, v.source AS v_source, v.checksum AS v_checksum, v.created_at AS v_created_at,
         v.created_by AS v_created_by, v.created_by_key_id AS v_created_by_key_id, v.deprecated_at AS v_deprecated_at
    FROM workflows w
    LEFT JOIN workflow_versions v
      ON v.tenant_id = w.tenant_id AND v.workflow_id = w.id AND v.version = w.latest_version`;

const INFO_COLUMNS = `workflow_id, version, checksum, created_at, created_by, created_by_key_id, deprecated_at,
  COALESCE(definition_bytes, octet_length(definition::text))::int AS definition_bytes, octet_length(source)::int AS source_bytes`;

/** Workflows and their immutable, numbered versions. */
export class WorkflowRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * Publishes `input.definition` as the next version of `workflowId` (creating the workflow on
   * first publish) — unless its checksum equals the latest version's: then that version is
   * returned (`created: false`) and only a new `name`, if given, is stored.
   *
   * Race-safe: the workflow row is created if missing and then locked (`FOR UPDATE`) before the
   * latest checksum is compared, so concurrent publishes get distinct, consecutive numbers and
   * two identical concurrent publishes create one version. `created_by` is the publishing key's
   * name, read in the same transaction.
   */
  async publishVersion(tenantId: string, input: PublishVersionInput): Promise<PublishedVersion> {
    return this.inTenant(tenantId, async (m) => {
      await sql(m, `INSERT INTO workflows (tenant_id, id, name, latest_version) VALUES ($1, $2, $3, 0) ON CONFLICT (tenant_id, id) DO NOTHING`, [
        tenantId,
        input.workflowId,
        input.name ?? null,
      ]);
      // Lock first; the latest version's checksum is read by the next statement, whose snapshot
      // sees whatever a publish that held the lock before us committed.
      const locked = await sql<{ latest_version: number; name: string | null }>(
        m,
        `SELECT latest_version, name FROM workflows WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
        [tenantId, input.workflowId],
      );
      const w = locked.rows[0]!;
      const latest = await sql<{ checksum: string }>(m, `SELECT checksum FROM workflow_versions WHERE tenant_id = $1 AND workflow_id = $2 AND version = $3`, [
        tenantId,
        input.workflowId,
        w.latest_version,
      ]);
      if (latest.rows[0]?.checksum === input.checksum) return sameVersion(m, tenantId, input, w);
      const bumped = await sql<{ latest_version: number }>(
        m,
        `UPDATE workflows SET latest_version = latest_version + 1, name = COALESCE($3, name), updated_at = now()
          WHERE tenant_id = $1 AND id = $2 RETURNING latest_version`,
        [tenantId, input.workflowId, input.name ?? null],
      );
      const version = bumped.rows[0]!.latest_version;
      const keyId = isUuid(input.createdByKeyId) ? input.createdByKeyId : null;
      const v = await sql<{ created_at: Date; created_by: string | null; definition_bytes: number; source_bytes: number }>(
        m,
        `INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum, created_by, created_by_key_id)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, (SELECT name FROM api_keys WHERE tenant_id = $1 AND id = $7::uuid), $7::uuid)
         RETURNING created_at, created_by, definition_bytes, octet_length(source)::int AS source_bytes`,
        [tenantId, input.workflowId, version, jsonb(input.definition), input.source, input.checksum, keyId],
      );
      const entity = Object.assign(new WorkflowVersionEntity(), {
        tenantId,
        workflowId: input.workflowId,
        version,
        definition: input.definition,
        source: input.source,
        checksum: input.checksum,
        createdAt: v.rows[0]!.created_at,
        createdBy: v.rows[0]!.created_by,
        createdByKeyId: keyId,
        deprecatedAt: null,
        definitionBytes: v.rows[0]!.definition_bytes,
        sourceBytes: v.rows[0]!.source_bytes,
      });
      return Object.assign(entity, { created: true });
    });
  }

  /**
   * The latest version of `workflowId` when its checksum is `input.checksum` (`created: false`;
   * a new `name`, if given, is stored as {@link publishVersion} does), else null and nothing
   * changes. Lets a publish answer an unchanged definition before validating it again; the
   * workflow row is locked as {@link publishVersion} locks it.
   */
  async latestIfIdentical(tenantId: string, input: Pick<PublishVersionInput, 'workflowId' | 'name' | 'checksum'>): Promise<PublishedVersion | null> {
    return this.inTenant(tenantId, async (m) => {
      const locked = await sql<{ latest_version: number; name: string | null; checksum: string }>(
        m,
        `SELECT w.latest_version, w.name, v.checksum FROM workflows w
           JOIN workflow_versions v ON v.tenant_id = w.tenant_id AND v.workflow_id = w.id AND v.version = w.latest_version
          WHERE w.tenant_id = $1 AND w.id = $2 FOR UPDATE OF w`,
        [tenantId, input.workflowId],
      );
      const w = locked.rows[0];
      return w?.checksum === input.checksum ? sameVersion(m, tenantId, input, w) : null;
    });
  }

  /** The tenant's workflows, by id, each with its latest version. */
  async list(tenantId: string): Promise<WorkflowSummary[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<WorkflowRow>(m, `${SUMMARY_SELECT} WHERE w.tenant_id = $1 ORDER BY w.id`, [tenantId]);
      return r.rows.map((row) => toSummary(tenantId, row));
    });
  }

  /** The ids of the tenant's published workflows, in order; nothing else is read. */
  async workflowIds(tenantId: string): Promise<string[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ id: string }>(m, `SELECT id FROM workflows WHERE tenant_id = $1 AND latest_version > 0 ORDER BY id`, [tenantId]);
      return r.rows.map((row) => row.id);
    });
  }

  /** One workflow with its latest version, or null when the tenant has no such workflow. */
  async getWorkflow(tenantId: string, workflowId: string): Promise<WorkflowSummary | null> {
    return this.inTenant(tenantId, (m) => summaryOf(m, tenantId, workflowId));
  }

  /** One version of a workflow, the latest when `version` is omitted; null when there is none. */
  async getVersion(tenantId: string, workflowId: string, version?: number): Promise<WorkflowVersionEntity | null> {
    return this.inTenant(tenantId, async (m) => {
      // Query builder rather than findOneBy: the recursive Json type of `definition` makes
      // TypeORM's FindOptionsWhere instantiation too deep for the compiler.
      const qb = m
        .getRepository(WorkflowVersionEntity)
        .createQueryBuilder('v')
        .where('v.tenant_id = :tenantId AND v.workflow_id = :workflowId', { tenantId, workflowId });
      if (version !== undefined) qb.andWhere('v.version = :version', { version });
      else qb.innerJoin('workflows', 'w', 'w.tenant_id = v.tenant_id AND w.id = v.workflow_id AND w.latest_version = v.version');
      return qb.getOne();
    });
  }

  /** Every version of a workflow, oldest first (empty when the workflow does not exist). */
  async listVersions(tenantId: string, workflowId: string): Promise<WorkflowVersionEntity[]> {
    return this.inTenant(tenantId, (m) =>
      m
        .getRepository(WorkflowVersionEntity)
        .createQueryBuilder('v')
        .where('v.tenant_id = :tenantId AND v.workflow_id = :workflowId', { tenantId, workflowId })
        .orderBy('v.version', 'ASC')
        .getMany(),
    );
  }

  /**
   * The versions of several workflows in one query, without definitions and sources: by
   * workflow id, each list oldest first (a workflow without versions maps to an empty list).
   */
  async versionInfos(tenantId: string, workflowIds: readonly string[]): Promise<Map<string, WorkflowVersionInfo[]>> {
    const out = new Map<string, WorkflowVersionInfo[]>(workflowIds.map((id) => [id, []]));
    if (workflowIds.length === 0) return out;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<VersionRow>(
        m,
        `SELECT ${INFO_COLUMNS} FROM workflow_versions WHERE tenant_id = $1 AND workflow_id = ANY($2::text[]) ORDER BY workflow_id, version`,
        [tenantId, [...new Set(workflowIds)]],
      );
      for (const row of r.rows) out.get(row.workflow_id)?.push(toVersionInfo(tenantId, row));
      return out;
    });
  }

  /**
   * Pins `version` as the default of new runs of `workflowId`, or with `null` unpins it (the
   * default follows the latest version again). The workflow row is locked and the version row
   * share-locked, so a concurrent deprecation of that version either comes first (and the pin is
   * refused) or waits. Returns the updated workflow, or why nothing changed.
   */
  async setDefaultVersion(tenantId: string, workflowId: string, version: number | null): Promise<SetDefaultVersionResult> {
    return this.inTenant(tenantId, async (m) => {
      const w = await sql(m, `SELECT 1 FROM workflows WHERE tenant_id = $1 AND id = $2 AND latest_version > 0 FOR UPDATE`, [tenantId, workflowId]);
      if (w.rowCount === 0) return { ok: false, reason: 'NO_WORKFLOW' } as const;
      if (version !== null) {
        const v = await sql<{ deprecated_at: Date | null }>(
          m,
          `SELECT deprecated_at FROM workflow_versions WHERE tenant_id = $1 AND workflow_id = $2 AND version = $3 FOR SHARE`,
          [tenantId, workflowId, version],
        );
        if (v.rowCount === 0) return { ok: false, reason: 'NO_VERSION' } as const;
        if (v.rows[0]!.deprecated_at !== null) return { ok: false, reason: 'DEPRECATED' } as const;
      }
      await sql(
        m,
        `UPDATE workflows SET default_version = $3, updated_at = now()
          WHERE tenant_id = $1 AND id = $2 AND default_version IS DISTINCT FROM $3::int`,
        [tenantId, workflowId, version],
      );
      return { ok: true, workflow: (await summaryOf(m, tenantId, workflowId))! } as const;
    });
  }

  /**
   * Deprecates a version (`deprecated: true`; deprecating it again keeps the first
   * `deprecatedAt`) or restores it (`false`). A deprecated version keeps its runs and may stay
   * the pinned default; new runs on it are refused by the coordinator. Returns the version, or
   * null when the tenant has no such workflow version.
   */
  async setDeprecated(tenantId: string, workflowId: string, version: number, deprecated: boolean): Promise<WorkflowVersionInfo | null> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<VersionRow>(
        m,
        `UPDATE workflow_versions SET deprecated_at = CASE WHEN $4 THEN COALESCE(deprecated_at, now()) END
          WHERE tenant_id = $1 AND workflow_id = $2 AND version = $3
          RETURNING ${INFO_COLUMNS}`,
        [tenantId, workflowId, version, deprecated],
      );
      const row = r.rows[0];
      return row ? toVersionInfo(tenantId, row) : null;
    });
  }
}

async function summaryOf(m: EntityManager, tenantId: string, workflowId: string): Promise<WorkflowSummary | null> {
  const r = await sql<WorkflowRow>(m, `${SUMMARY_SELECT} WHERE w.tenant_id = $1 AND w.id = $2 AND w.latest_version > 0`, [tenantId, workflowId]);
  const row = r.rows[0];
  return row ? toSummary(tenantId, row) : null;
}

function toSummary(tenantId: string, row: WorkflowRow): WorkflowSummary {
  return {
    workflowId: row.id,
    name: row.name,
    latestVersion: row.latest_version,
    pinnedVersion: row.default_version,
    defaultVersion: row.default_version ?? row.latest_version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    latest:
      row.v_created_at === null
        ? null
        : Object.assign(new WorkflowVersionEntity(), {
            tenantId,
            workflowId: row.id,
            version: row.latest_version,
            definition: row.v_definition as Json,
            source: row.v_source as string,
            checksum: row.v_checksum as string,
            createdAt: row.v_created_at,
            createdBy: row.v_created_by,
            createdByKeyId: row.v_created_by_key_id,
            deprecatedAt: row.v_deprecated_at,
          }),
  };
}

/** The latest version `w` returned for a publish identical to it, after storing a new `name` if one is given. */
async function sameVersion(
  m: EntityManager,
  tenantId: string,
  input: Pick<PublishVersionInput, 'workflowId' | 'name'>,
  w: { latest_version: number; name: string | null },
): Promise<PublishedVersion> {
  if (input.name != null && input.name !== w.name) {
    await sql(m, `UPDATE workflows SET name = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2`, [tenantId, input.workflowId, input.name]);
  }
  const same = await sql<VersionRow>(
    m,
    `SELECT ${INFO_COLUMNS}, definition, source FROM workflow_versions WHERE tenant_id = $1 AND workflow_id = $2 AND version = $3`,
    [tenantId, input.workflowId, w.latest_version],
  );
  return { ...toVersion(tenantId, same.rows[0]!), created: false };
}

function toVersionInfo(tenantId: string, row: VersionRow): WorkflowVersionInfo {
  return {
    tenantId,
    workflowId: row.workflow_id,
    version: row.version,
    checksum: row.checksum,
    createdAt: row.created_at,
    createdBy: row.created_by,
    createdByKeyId: row.created_by_key_id,
    deprecatedAt: row.deprecated_at,
    definitionBytes: row.definition_bytes,
    sourceBytes: row.source_bytes,
  };
}

function toVersion(tenantId: string, row: VersionRow): WorkflowVersionEntity & VersionBytes {
  return Object.assign(new WorkflowVersionEntity(), { ...toVersionInfo(tenantId, row), definition: row.definition as Json, source: row.source as string });
}
