import type { Json } from '../json.js';
import { sql } from '../sql.js';
import type { Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/**
 * What the state machine reads of a run beyond its node states, inside the event's tenant
 * transaction: task outputs and inputs, and the outputs of a `for_each` node's iterations.
 */
export class RunStoreRepository extends TenantScopedRepository {
  constructor(m: Transaction) {
    super(m);
  }

  /** The outputs of the tasks of `nodeIds` in run `runId` (a node's own task, not its iterations), by node id. */
  async outputs(tenantId: string, runId: string, nodeIds: readonly string[]): Promise<Map<string, Json | null>> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ node_id: string; output: Json | null }>(
        m,
        `SELECT node_id, output FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($3::text[]) AND iteration IS NULL AND NOT loop_archived`,
        [tenantId, runId, nodeIds],
      );
      return new Map(r.rows.map((row) => [row.node_id, row.output]));
    });
  }

  /** Characters of the JSON text of every iteration output of `nodeId`, measured in the database (nothing is read). */
  async iterationOutputChars(tenantId: string, runId: string, nodeId: string): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ total: string | null }>(
        m,
        `SELECT sum(length(output::text)) AS total FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = $3 AND iteration IS NOT NULL AND NOT loop_archived`,
        [tenantId, runId, nodeId],
      );
      return Number(r.rows[0]?.total ?? 0);
    });
  }

  /** The outputs of the iterations of `nodeId`, in element order. */
  async iterationOutputs(tenantId: string, runId: string, nodeId: string): Promise<Array<Json | null>> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ output: Json | null }>(
        m,
        `SELECT output FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = $3 AND iteration IS NOT NULL AND NOT loop_archived ORDER BY iteration`,
        [tenantId, runId, nodeId],
      );
      return r.rows.map((row) => row.output);
    });
  }

  /** The stored input of task `taskId` of run `runId`: undefined when there is no such task, null when it has none. */
  async taskInput(tenantId: string, runId: string, taskId: string): Promise<Json | null | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ input: Json | null }>(m, `SELECT input FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND id = $3`, [tenantId, runId, taskId]);
      return r.rows[0] === undefined ? undefined : r.rows[0].input;
    });
  }
}
