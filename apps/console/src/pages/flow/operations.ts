import { CONCURRENCY_KEYS_PAGE_MAX } from '@weft/contract';
import type { FlowQuery } from '../../api/generated/graphql.js';

/** The flow page's GraphQL document and the shape of its answer (generated from it). */

export type FlowData = FlowQuery;
export type ConcurrencyKeyRow = FlowQuery['concurrencyKeys']['edges'][number]['node'];
export type RateLimitRow = FlowQuery['rateLimits'][number];

/** Concurrency keys per page (the API's largest), the `$first` of {@link FLOW}. */
export const KEYS_PAGE = CONCURRENCY_KEYS_PAGE_MAX;

export const FLOW = /* GraphQL */ `
  query Flow($workflowId: String, $first: Int, $after: String) {
    concurrencyKeys(workflowId: $workflowId, first: $first, after: $after) {
      edges { cursor node { scope workflowId key limit active queued } }
      pageInfo { hasNextPage endCursor }
    }
    rateLimits { key limit perSeconds startedInWindow held nextStartAt }
  }
`;
