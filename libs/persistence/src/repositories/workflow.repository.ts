import type { DataSource, EntityManager } from 'typeorm';
import { WorkflowVersionEntity } from '../entities/workflow-version.entity.js';
import type { Json } from '../json.js';
import { jsonb, sql } from '../sql.js';
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
  checksum: string;
}

/** A workflow with its latest version (`null` only if it was never published). */
export interface WorkflowSummary {
  workflowId: string;
  name: string | null;
  latestVersion: number;
  createdAt: Date;
  updatedAt: Date;
  latest: WorkflowVersionEntity | null;
}

interface WorkflowRow {
  id: string;
  name: string | null;
  latest_version: number;
  created_at: Date;
  updated_at: Date;
  v_definition: Json | null;
  v_source: string | null;
  v_checksum: string | null;
  v_created_at: Date | null;
}

/** Workflows and their immutable, numbered versions. */
export class WorkflowRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * Publishes a new version of `workflowId` (creating the workflow on first publish): bumps
   * `workflows.latest_version` with one upsert (the row lock makes concurrent publishes get
   * distinct, consecutive numbers) and inserts the version row. Returns the new version number
   * (1, 2, …) and its creation time.
   */
  async publishVersion(tenantId: string, input: PublishVersionInput): Promise<{ version: number; createdAt: Date }> {
    return this.inTenant(tenantId, async (m) => {
      const w = await sql<{ latest_version: number }>(
        m,
        `INSERT INTO workflows (tenant_id, id, name, latest_version) VALUES ($1, $2, $3, 1)
         ON CONFLICT (tenant_id, id) DO UPDATE
           SET latest_version = workflows.latest_version + 1,
               name = COALESCE(EXCLUDED.name, workflows.name),
               updated_at = now()
         RETURNING latest_version`,
        [tenantId, input.workflowId, input.name ?? null],
      );
      const version = w.rows[0]!.latest_version;
      const v = await sql<{ created_at: Date }>(
        m,
        `INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6) RETURNING created_at`,
        [tenantId, input.workflowId, version, jsonb(input.definition), input.source, input.checksum],
      );
      return { version, createdAt: v.rows[0]!.created_at };
    });
  }

  /** The tenant's workflows, by id, each with its latest version. */
  async list(tenantId: string): Promise<WorkflowSummary[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<WorkflowRow>(
        m,
        `SELECT w.id, w.name, w.latest_version, w.created_at, w.updated_at,
                v.definition AS v_definition, v.source AS v_source, v.checksum AS v_checksum, v.created_at AS v_created_at
           FROM workflows w
           LEFT JOIN workflow_versions v
             ON v.tenant_id = w.tenant_id AND v.workflow_id = w.id AND v.version = w.latest_version
          WHERE w.tenant_id = $1
          ORDER BY w.id`,
        [tenantId],
      );
      return r.rows.map((row) => ({
        workflowId: row.id,
        name: row.name,
        latestVersion: row.latest_version,
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
              }),
      }));
    });
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
}
