import type { Command } from 'commander';
import { operation, type WeftClient } from '@weft/client';
import { CONCURRENCY_KEYS_PAGE_MAX as KEYS_PAGE_MAX } from '@weft/contract';
import type { FlowKeysQuery, FlowKeysQueryVariables, RateLimitsQuery, RateLimitsQueryVariables } from './generated/graphql.js';
import { positiveInt } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import { cell, printAs, table, withOutput, type OutputFormat } from './output.js';

const FLOW_KEYS = operation<FlowKeysQuery, FlowKeysQueryVariables>(/* GraphQL */ `
  query FlowKeys($w: String, $n: Int, $a: String) {
    concurrencyKeys(workflowId: $w, first: $n, after: $a) {
      edges { node { scope workflowId key limit active queued } } pageInfo { hasNextPage endCursor }
    }
  }
`);

const RATE_LIMITS = operation<RateLimitsQuery, RateLimitsQueryVariables>(/* GraphQL */ `
  query RateLimits { rateLimits { key limit perSeconds startedInWindow held nextStartAt } }
`);

/** A concurrency group as `concurrencyKeys` answers it. */
export type ConcurrencyKeyRow = FlowKeysQuery['concurrencyKeys']['edges'][number]['node'];

/** A rate key as `rateLimits` answers it. */
export type RateLimitRow = RateLimitsQuery['rateLimits'][number];

/** How many concurrency keys `flow keys` lists without `--limit`. */
const DEFAULT_KEYS_LIMIT = 100;

/** The `flow keys` table: one line per group, `-` for a tenant-scoped group's workflow, `""` shown for a workflow's one group. */
export function keysTable(rows: readonly ConcurrencyKeyRow[]): string {
  return table(
    ['SCOPE', 'WORKFLOW', 'KEY', 'LIMIT', 'ACTIVE', 'QUEUED'],
    rows.map((r) => [r.scope, cell(r.workflowId), r.key === '' ? '""' : cell(r.key), String(r.limit), String(r.active), String(r.queued)]),
  );
}

/** The `flow rate-limits` table: one line per key, its window in seconds (as `per_seconds` states it), the next start of a held attempt. */
export function rateLimitsTable(rows: readonly RateLimitRow[]): string {
  return table(
    ['KEY', 'LIMIT', 'WINDOW', 'STARTED', 'HELD', 'NEXT START'],
    rows.map((r) => [
      cell(r.key),
      cell(r.limit),
      r.perSeconds === null ? '-' : `${r.perSeconds}s`,
      String(r.startedInWindow),
      String(r.held),
      r.nextStartAt ?? '-',
    ]),
  );
}

/** Up to `limit` concurrency keys (of `workflowId`, when given), page by page; `more` tells whether more exist. */
export async function listKeys(c: WeftClient, workflowId: string | undefined, limit: number): Promise<{ keys: ConcurrencyKeyRow[]; more: boolean }> {
  const keys: ConcurrencyKeyRow[] = [];
  let after: string | null = null;
  for (;;) {
    const r: FlowKeysQuery = await c.request(FLOW_KEYS, { w: workflowId, n: Math.min(KEYS_PAGE_MAX, limit - keys.length), a: after });
    keys.push(...r.concurrencyKeys.edges.map((e) => e.node));
    const { hasNextPage, endCursor } = r.concurrencyKeys.pageInfo;
    if (!hasNextPage || !endCursor) return { keys, more: false };
    if (keys.length >= limit) return { keys, more: true };
    after = endCursor;
  }
}

/**
 * Registers `weft flow keys` (the tenant's concurrency groups: limit, active and queued runs)
 * and `weft flow rate-limits` (its rate keys: window, starts in it, held attempts).
 */
export function flowCommands(program: Command): void {
  const flow = program.command('flow').description("the tenant's flow control: concurrency keys and rate limits");

  withOutput(withConnection(flow.command('keys')))
    .description('list the concurrency keys (groups) by key: their limit, active (RUNNING) and queued runs')
    .option('--workflow <id>', "only this workflow's keys and the tenant-wide keys its runs joined")
    .option('--limit <n>', `how many keys at most (default ${DEFAULT_KEYS_LIMIT}); pages through the API ${KEYS_PAGE_MAX} at a time`, positiveInt('--limit'))
    .action(async (o: ConnectionFlags & { workflow?: string; limit?: number; output: OutputFormat }) => {
      const { keys, more } = await withClient(o, (c) => listKeys(c, o.workflow, o.limit ?? DEFAULT_KEYS_LIMIT));
      printAs(o.output, keys, () => keysTable(keys));
      if (more && o.output === 'table') process.stderr.write(`note: the first ${keys.length} keys shown; there are more (--limit N to see them)\n`);
    });

  withOutput(withConnection(flow.command('rate-limits')))
    .description(
      'list the rate keys that started an attempt in the last day or hold attempts now: limit per window, starts in the window, held attempts and the next start',
    )
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(RATE_LIMITS));
      printAs(o.output, r.rateLimits, () => rateLimitsTable(r.rateLimits));
    });
}
