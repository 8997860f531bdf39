import type { NewRun } from './run-event.repository.js';
import { RUN_LABELS_INSERT } from './run-labels.js';
import { gatedWrites, type WritePart } from './write-batch.js';

/**
 * A new top-level run and its first event as one statement, for a process that decided the
 * event from memory: the run row inserted as the event leaves it (`event_seq` = `seq`), and the
 * event's other writes (`parts`, in their gated form: its tasks, backlog rows and history row,
 * never an update of the run row, which the statement cannot see) written only if the run row
 * was.
 *
 * The row is inserted only while `run.version` is still the version a start of
 * `run.workflowId` asking for `requested` (null: the workflow's default) would run on, and is not
 * deprecated; and not when `run.idempotencyKey` already names a run of the tenant. Otherwise the
 * statement writes nothing and raises nothing: the caller starts the run on its locking path,
 * which says why.
 *
 * The run's labels get their `run_labels` rows with it.
 *
 * The statement returns one row: `ok` (the run was written) and each expected count, checked by
 * `weft_expect_rows` when it was. Undefined when a part has no gated form.
 */
export function startWrite(
  tenantId: string,
  run: NewRun,
  seq: number,
  requested: number | null,
  parts: readonly WritePart[],
): { text: string; params: unknown[] } | undefined {
  if (parts.some((p) => p.gated === undefined)) return undefined;
  const params: unknown[] = [
    tenantId,
    run.id,
    run.workflowId,
    run.version,
    run.status,
    JSON.stringify(run.input),
    JSON.stringify(run.config),
    run.idempotencyKey,
    run.startNodeId,
    seq,
    run.now,
    run.traceparent,
    run.traceCallerSpan,
    run.priority,
    run.concurrencyGroup,
    run.concurrencyKey,
    requested,
    JSON.stringify(run.labels),
    run.deadlineAt ?? null,
  ];
  const ctes = [
    `v AS MATERIALIZED (SELECT 1 FROM workflows w
                          JOIN workflow_versions wv ON wv.tenant_id = w.tenant_id AND wv.workflow_id = w.id
                           AND wv.version = COALESCE($17::int, w.default_version, w.latest_version)
                         WHERE w.tenant_id = $1::uuid AND w.id = $3::text AND wv.version = $4::int AND wv.deprecated_at IS NULL)`,
    `r AS (INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, idempotency_key, start_node_id, event_seq,
                             created_at, updated_at, traceparent, trace_caller_span, priority, concurrency_group, concurrency_key, labels,
                             deadline_at)
           SELECT $1::uuid, $2::uuid, $3::text, $4::int, $5::text, $6::jsonb, $7::jsonb, $8::text, $9::text, $10::int,
                  $11::timestamptz, $11::timestamptz, $12::text, $13::text, $14::smallint, $15::text, $16::text, $18::jsonb,
                  $19::timestamptz
            WHERE EXISTS (SELECT 1 FROM v)
           ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
           RETURNING 1)`,
    `gate AS MATERIALIZED (SELECT EXISTS (SELECT 1 FROM r) AS ok)`,
  ];
  // A run without labels writes what it always did: no CTE for rows it does not have.
  if (Object.keys(run.labels).length > 0) ctes.push(`l AS (${RUN_LABELS_INSERT('$1::uuid', '$2::uuid', '$18::jsonb')})`);
  // A start takes no attempt: every part is written on the run row's insert alone.
  const counts = gatedWrites(
    run.id,
    parts.map((part) => ({ part, when: 'ok' })),
    'true',
    ctes,
    params,
  );
  return { text: `WITH ${ctes.join(',\n')}\nSELECT (SELECT ok FROM gate) AS ok${counts.map((c) => `, ${c}`).join('')}`, params };
}
