/**
 * The `run_labels` rows of a new run, as the body of a data-modifying CTE of the statement that
 * inserts the run: one row per key of the labels (`labels`, a jsonb object of strings), written
 * only when the CTE `r` (the run's insert, `RETURNING`) returned the run. Each argument is the
 * SQL text of a parameter: the tenant (uuid), the run id (uuid) and the labels (jsonb).
 */
export const RUN_LABELS_INSERT = (tenantId: string, runId: string, labels: string): string =>
  `INSERT INTO run_labels (tenant_id, key, value, run_id)
   SELECT ${tenantId}, e.key, e.value, ${runId} FROM jsonb_each_text(${labels}) e WHERE EXISTS (SELECT 1 FROM r)`;
