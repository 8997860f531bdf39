import { Injectable } from '@nestjs/common';
import { WeftError } from '@weft/engine';
import { RunBatches } from '@weft/engine/coordinator';
import { isUuid, RunBatchRepository, type RunBatchRow } from '@weft/persistence';
import type { Principal } from '../auth/principal.js';
import { checkFirst } from '../common/page-size.js';
import { runRowFilter } from '../runs/run-filter.js';
import type { CreateRunBatchInput } from './create-run-batch.input.js';
import type { RunBatchConnection, RunBatchItemConnection, RunBatchObject } from './run-batch.object.js';

/** Pages of batches and items: at most this many (default 50). */
const PAGE_MAX = 1000;
const PAGE_DEFAULT = 50;

/** The bulk actions of the caller's tenant: created and stopped through the engine, read from their tables. */
@Injectable()
export class RunBatchesService {
  private readonly repo: RunBatchRepository;

  constructor(
    private readonly batches: RunBatches,
    repo: RunBatchRepository,
  ) {
    this.repo = repo;
  }

  /** Creates a bulk action (or returns the one its idempotency key names); see RunBatches.create. */
  async create(p: Principal, input: CreateRunBatchInput): Promise<RunBatchObject> {
    const filterJson = JSON.parse(JSON.stringify(input.filter ?? {})) as Record<string, unknown>;
    const { batch } = await this.batches.create(p.tenantId, {
      action: input.action,
      filter: runRowFilter(input.filter),
      filterJson,
      ...(input.fromNodeId ? { fromNodeId: input.fromNodeId } : {}),
      ...(input.reason ? { reason: input.reason } : {}),
      ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
    });
    return batch;
  }

  /** The batch, or NOT_FOUND. */
  async get(p: Principal, id: string): Promise<RunBatchObject> {
    const batch = await this.repo.get(p.tenantId, id);
    if (!batch) throw new WeftError('NOT_FOUND', `run batch ${id} not found`);
    return batch;
  }

  /** Stops a running batch (a finished one is returned as it is), or NOT_FOUND. */
  async stop(p: Principal, id: string): Promise<RunBatchObject> {
    const batch = await this.batches.stop(p.tenantId, id);
    if (!batch) throw new WeftError('NOT_FOUND', `run batch ${id} not found`);
    return batch;
  }

  /** A page of the tenant's batches, newest first. */
  async list(p: Principal, first: number | null | undefined, after: string | null | undefined): Promise<RunBatchConnection> {
    const n = pageSize(first);
    if (after != null && !isUuid(after)) throw new WeftError('BAD_USER_INPUT', `after: ${JSON.stringify(after)} is not a cursor of this list`);
    const rows = await this.repo.list(p.tenantId, n, after ?? null);
    const page = rows.slice(0, n);
    return {
      edges: page.map((b: RunBatchRow) => ({ cursor: b.id, node: b })),
      pageInfo: { hasNextPage: rows.length > n, hasPreviousPage: after != null, startCursor: page[0]?.id ?? null, endCursor: page.at(-1)?.id ?? null },
    };
  }

  /** A page of a batch's items in order; `after` is a previous page's cursor. */
  async items(batch: RunBatchObject, first: number | null | undefined, after: string | null | undefined): Promise<RunBatchItemConnection> {
    const n = pageSize(first);
    if (after != null && !/^[0-9]{1,9}$/.test(after)) throw new WeftError('BAD_USER_INPUT', `after: ${JSON.stringify(after)} is not a cursor of this list`);
    const from = after == null ? 0 : Number(after);
    const rows = await this.repo.items(batch.tenantId, batch.id, n, from);
    const page = rows.slice(0, n);
    return {
      edges: page.map((i) => ({ cursor: String(i.seq), node: { runId: i.runId, outcome: i.outcome, error: i.error } })),
      pageInfo: {
        hasNextPage: rows.length > n,
        hasPreviousPage: from > 0,
        startCursor: page[0] ? String(page[0].seq) : null,
        endCursor: page.at(-1) ? String(page.at(-1)!.seq) : null,
      },
    };
  }
}

/** `first` within 1…{@link PAGE_MAX} ({@link checkFirst}), {@link PAGE_DEFAULT} when absent. */
function pageSize(first: number | null | undefined): number {
  checkFirst(first, PAGE_MAX);
  return first ?? PAGE_DEFAULT;
}
