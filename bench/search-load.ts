/**
 * The data of `npm run bench:search`: runs of several tenants loaded with set-based SQL as the
 * database's owner, and the filter parameters the bench samples, drawn from the loaded rows.
 */
import type pg from 'pg';

/** Workflows of every tenant, the first most used. */
export const WORKFLOWS = ['orders-sync', 'invoice-export', 'email-digest', 'etl-nightly', 'webhook-relay'];
/** Versions 1…this of every workflow, the newest most used. */
const VERSIONS = 3;
/** Node ids a failed run's FAILED task is of. */
export const NODES = ['fetch-orders', 'transform', 'charge-card', 'send-email', 'store-result'];
/** Label values: `env` on every labelled run, `team` too, `region` on 60 %, `customer` (2,000 values) on half. */
export const ENVS = ['prod', 'staging', 'dev'];
export const TEAMS = ['payments', 'growth', 'platform', 'data', 'ops'];
export const REGIONS = ['eu-west-1', 'us-east-1', 'ap-southeast-2'];
const CUSTOMERS = 2000;
/** Days the runs' created_at is spread over, back from now. */
export const DAYS = 90;

/** What {@link loadRuns} made. */
export interface Loaded {
  tenants: string[];
  runs: number;
  labelRows: number;
  tasks: number;
  /** Per status, how many runs. */
  statuses: Record<string, number>;
  /** Seconds the load took, and the ANALYZE after it. */
  loadSeconds: number;
  analyzeSeconds: number;
}

/**
 * Loads `runs` runs spread evenly over `tenantCount` new tenants into the migrated database of
 * `owner` (a connection as the tables' owner, a superuser): 80 % SUCCEEDED, 10 % FAILED, 4 %
 * RUNNING (created in the last 2 hours), 3 % CANCELLED, 3 % TIMED_OUT; created_at over the last
 * {@link DAYS} days, finished_at 0.2 s to 10 min later for ended runs; an error of varied text on
 * FAILED and TIMED_OUT runs; labels on 85 % of runs, in `runs.labels` and `run_labels` alike;
 * for each FAILED run a FAILED task of one node, and for every run a COMPLETED task of each of the
 * first `tasksPerRun` nodes of {@link NODES} (but a FAILED run's failed one). Foreign keys and row triggers are skipped for the load
 * (`session_replication_role = replica`): the rows satisfy them by construction, and the stored
 * sizes the triggers would compute are written directly. Then `VACUUM ANALYZE`, as autovacuum
 * would do on a live installation.
 */
export async function loadRuns(owner: pg.Client, runs: number, tenantCount: number, tasksPerRun: number, say: (line: string) => void): Promise<Loaded> {
  const t0 = performance.now();
  await owner.query(`SET session_replication_role = replica`);
  await owner.query(`SELECT setseed(0.4242)`);
  const { rows } = await owner.query<{ id: string }>(
    `INSERT INTO tenants (id, name) SELECT gen_random_uuid(), 'search-bench-' || i FROM generate_series(1, $1::int) i RETURNING id`,
    [tenantCount],
  );
  const tenants = rows.map((r) => r.id);
  await owner.query(
    `INSERT INTO workflows (tenant_id, id, name, latest_version, default_version)
     SELECT t, w, w, $3::int, $3::int FROM unnest($1::uuid[]) t, unnest($2::text[]) w`,
    [tenants, WORKFLOWS, VERSIONS],
  );
  await owner.query(
    `INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum, definition_bytes)
     SELECT t, w, v, '{}', '', md5(w || v), 2 FROM unnest($1::uuid[]) t, unnest($2::text[]) w, generate_series(1, $3::int) v`,
    [tenants, WORKFLOWS, VERSIONS],
  );
  say(`  inserting ${runs.toLocaleString('en-US')} runs`);
  await owner.query(
    `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, output, error, created_at, updated_at,
                       finished_at, labels, input_bytes, config_bytes, output_bytes, event_seq)
     SELECT tenant_id, gen_random_uuid(), workflow_id, version, status, '{}', '{}',
            CASE WHEN status = 'SUCCEEDED' THEN '{"ok": true}'::jsonb END,
            CASE status
              WHEN 'TIMED_OUT' THEN 'run deadline of ' || (60 * (1 + g % 30)) || ' s passed'
              WHEN 'FAILED' THEN CASE floor(re * 6)::int
                WHEN 0 THEN 'HTTP 502 Bad Gateway from https://api.partner' || (g % 37) || '.example.com/v2/orders/' || substr(h, 1, 8)
                WHEN 1 THEN 'timeout after ' || (5000 * (1 + g % 12)) || ' ms waiting for https://partner' || (g % 37) || '.example.com'
                WHEN 2 THEN 'card declined (insufficient_funds) for customer cus_' || substr(h, 1, 12)
                WHEN 3 THEN 'ECONNRESET: socket hang up calling https://hooks.example.org/' || substr(h, 9, 10)
                WHEN 4 THEN 'validation failed: /items/' || (g % 50) || '/email must match format "email" (got ' || substr(h, 20, 6) || ')'
                ELSE 'TypeError: Cannot read properties of undefined (reading ''' || (ARRAY['id', 'amount', 'sku', 'email'])[1 + g % 4] || ''') at line ' || (g % 400)
              END
            END,
            created_at, coalesce(finished_at, created_at), finished_at, labels,
            2, 2, CASE WHEN status = 'SUCCEEDED' THEN 12 ELSE 0 END, CASE WHEN status = 'RUNNING' THEN 3 ELSE 8 END
       FROM (
         SELECT *, CASE WHEN status = 'RUNNING' THEN NULL ELSE created_at + (0.2 + rd * rd * rd * 600) * interval '1 second' END AS finished_at
           FROM (
             SELECT g, re, md5(g::text) AS h,
                    ($1::uuid[])[1 + g % $3::int] AS tenant_id,
                    ($4::text[])[1 + floor(rw * rw * ${WORKFLOWS.length})::int] AS workflow_id,
                    ${VERSIONS} - floor(rv * rv * ${VERSIONS})::int AS version,
                    CASE WHEN rs < 0.80 THEN 'SUCCEEDED' WHEN rs < 0.90 THEN 'FAILED' WHEN rs < 0.94 THEN 'RUNNING'
                         WHEN rs < 0.97 THEN 'CANCELLED' ELSE 'TIMED_OUT' END AS status,
                    now() - CASE WHEN rs >= 0.90 AND rs < 0.94 THEN rc * interval '2 hours' ELSE rc * interval '${DAYS} days' END AS created_at,
                    rd,
                    CASE WHEN rl < 0.85 THEN jsonb_strip_nulls(jsonb_build_object(
                      'env', CASE WHEN l1 < 0.7 THEN 'prod' WHEN l1 < 0.9 THEN 'staging' ELSE 'dev' END,
                      'team', ($5::text[])[1 + floor(l2 * ${TEAMS.length})::int],
                      'region', CASE WHEN l3 < 0.6 THEN ($6::text[])[1 + floor(l3 / 0.6 * ${REGIONS.length})::int] END,
                      'customer', CASE WHEN l4 < 0.5 THEN 'c' || floor(l4 * 2 * ${CUSTOMERS})::int END))
                    ELSE '{}'::jsonb END AS labels
               FROM (
                 SELECT g, random() AS rs, random() AS rc, random() AS rd, random() AS rw, random() AS rv, random() AS re,
                        random() AS rl, random() AS l1, random() AS l2, random() AS l3, random() AS l4
                   FROM generate_series(0, $2::int - 1) g
               ) draws
           ) picked
       ) timed`,
    [tenants, runs, tenantCount, WORKFLOWS, TEAMS, REGIONS],
  );
  say(`  inserting run_labels and tasks`);
  const labels = await owner.query(
    `INSERT INTO run_labels (tenant_id, key, value, run_id) SELECT r.tenant_id, l.key, l.value, r.id FROM runs r, jsonb_each_text(r.labels) l`,
  );
  // The failed node follows from the run id; the COMPLETED tasks are of the other nodes.
  const failed = await owner.query(
    `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, queue, status, attempt, error, created_at, updated_at, finished_at, input_bytes, output_bytes)
     SELECT tenant_id, gen_random_uuid(), id, ($1::text[])[1 + abs(hashtext(id::text)) % ${NODES.length}], 'HTTP', 'http', 'FAILED', 3, error,
            created_at, finished_at, finished_at, 0, 0
       FROM runs WHERE status = 'FAILED'`,
    [NODES],
  );
  const completed = await owner.query(
    `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, queue, status, attempt, output, created_at, updated_at, finished_at, input_bytes, output_bytes)
     SELECT r.tenant_id, gen_random_uuid(), r.id, n.node, 'HTTP', 'http', 'COMPLETED', 0, '{}', r.created_at, r.created_at, r.created_at, 0, 2
       FROM runs r, unnest($1::text[]) WITH ORDINALITY n(node, k)
      WHERE n.k <= $2 AND NOT (r.status = 'FAILED' AND n.node = ($1::text[])[1 + abs(hashtext(r.id::text)) % ${NODES.length}])`,
    [NODES, tasksPerRun],
  );
  await owner.query(`RESET session_replication_role`);
  const t1 = performance.now();
  say(`  VACUUM ANALYZE`);
  await owner.query(`VACUUM ANALYZE tenants, workflows, workflow_versions, runs, run_labels, tasks`);
  const t2 = performance.now();
  const counts = await owner.query<{ status: string; n: string }>(`SELECT status, count(*)::text AS n FROM runs GROUP BY status ORDER BY status`);
  return {
    tenants,
    runs,
    labelRows: labels.rowCount ?? 0,
    tasks: (failed.rowCount ?? 0) + (completed.rowCount ?? 0),
    statuses: Object.fromEntries(counts.rows.map((r) => [r.status, Number(r.n)])),
    loadSeconds: (t1 - t0) / 1000,
    analyzeSeconds: (t2 - t1) / 1000,
  };
}

/** Error texts the bench searches for: of every frequency, down to one run's and none. */
export async function errorTerms(owner: pg.Client): Promise<string[]> {
  // Ids of single runs (a customer's, a hook's): a substring as rare as the data has.
  const { rows } = await owner.query<{ term: string }>(
    `SELECT substring(error FROM 'cus_([0-9a-f]{12})') AS term FROM runs
      WHERE status = 'FAILED' AND error LIKE 'card declined%' ORDER BY id LIMIT 8`,
  );
  return [
    'timeout',
    'Bad Gateway',
    'INSUFFICIENT_FUNDS',
    'socket hang up',
    "reading 'sku'",
    'deadline of 600 s',
    ...rows.map((r) => r.term),
    'no such error text',
  ];
}
