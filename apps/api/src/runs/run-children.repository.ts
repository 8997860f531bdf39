import type { DataSource, EntityManager } from 'typeorm';
import { isUuid, RunEntity, TenantScopedRepository } from '@weft/persistence';

/** Most child runs `Run.children` returns: the oldest this many. */
export const RUN_CHILDREN_MAX = 100;

/**
 * The child runs of a run (those SUBWORKFLOW tasks started), read in the tenant transaction like
 * every read of {@link RunRepository}. It lives beside the API only while libs/persistence is
 * being changed for child runs; `childrenOfRun` belongs in RunRepository.
 */
export class RunChildrenRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * The runs of `tenantId` whose `parent_run_id` is `runId`, oldest first (`created_at, id`), at
   * most `limit` (clamped to 1…{@link RUN_CHILDREN_MAX}); empty for an id that is not a UUID or a
   * run without children. Driver errors are mapped as in every repository.
   */
  async childrenOfRun(tenantId: string, runId: string, limit: number = RUN_CHILDREN_MAX): Promise<RunEntity[]> {
    if (!isUuid(runId)) return [];
    const take = Math.min(RUN_CHILDREN_MAX, Math.max(1, Math.floor(limit)));
    return this.inTenant(tenantId, (m) =>
      m
        .getRepository(RunEntity)
        .createQueryBuilder('r')
        .where('r.tenant_id = :tenantId AND r.parent_run_id = :runId', { tenantId, runId })
        .orderBy('r.created_at', 'ASC')
        .addOrderBy('r.id', 'ASC')
        .limit(take)
        .getMany(),
    );
  }
}
