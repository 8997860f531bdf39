import { Injectable } from '@nestjs/common';
import { CONCURRENCY_KEYS_PAGE_MAX, FlowViewRepository, type RunWait, type TaskWait } from '@weft/persistence';
import type { Principal } from '../auth/principal.js';
import { checkFirst } from '../common/page-size.js';
import type { ConcurrencyKeyConnection, RateLimitObject } from './flow.object.js';

/**
 * Flow control as a tenant sees it: its concurrency groups, its rate keys, and why its QUEUED
 * runs and tasks wait. Every read is in the tenant's transaction and counts its own rows only.
 */
@Injectable()
export class FlowService {
  constructor(private readonly flow: FlowViewRepository) {}

  /** A page of the tenant's concurrency groups by key; `first` 1…200 (BAD_USER_INPUT otherwise), default 20. */
  async concurrencyKeys(
    p: Principal,
    workflowId: string | null | undefined,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<ConcurrencyKeyConnection> {
    checkFirst(first, CONCURRENCY_KEYS_PAGE_MAX);
    const page = await this.flow.concurrencyKeys(p.tenantId, { workflowId: workflowId ?? undefined, first: first ?? undefined, after });
    return {
      edges: page.edges,
      pageInfo: {
        hasNextPage: page.pageInfo.hasNextPage,
        hasPreviousPage: false,
        startCursor: page.edges[0]?.cursor ?? null,
        endCursor: page.pageInfo.endCursor,
      },
    };
  }

  /** The tenant's rate keys started in the last day or holding attempts now, by key. */
  rateLimits(p: Principal): Promise<RateLimitObject[]> {
    return this.flow.rateLimits(p.tenantId);
  }

  /** The waits of the tenant's QUEUED runs among `runIds`, by run id. */
  runWaits(tenantId: string, runIds: readonly string[]): Promise<Map<string, RunWait>> {
    return this.flow.runWaits(tenantId, runIds);
  }

  /** The backlog rows of the tenant's QUEUED tasks among `taskIds`, by task id. */
  taskWaits(tenantId: string, taskIds: readonly string[]): Promise<Map<string, TaskWait>> {
    return this.flow.taskWaits(tenantId, taskIds);
  }
}
