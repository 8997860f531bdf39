/** The flow page's GraphQL documents and the shape of their answers. */

export interface ConcurrencyKeyRow {
  scope: string;
  workflowId: string | null;
  key: string;
  limit: number;
  active: number;
  queued: number;
}

export interface RateLimitRow {
  key: string;
  limit: number | null;
  perSeconds: number | null;
  startedInWindow: number;
  held: number;
  nextStartAt: string | null;
}

export interface FlowData {
  concurrencyKeys: { edges: { cursor: string; node: ConcurrencyKeyRow }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  rateLimits: RateLimitRow[];
}

/** Concurrency keys per page (the API's largest). */
export const KEYS_PAGE = 200;

export const FLOW = /* GraphQL */ `
  query Flow($workflowId: String, $after: String) {
    concurrencyKeys(workflowId: $workflowId, first: ${KEYS_PAGE}, after: $after) {
      edges { cursor node { scope workflowId key limit active queued } }
      pageInfo { hasNextPage endCursor }
    }
    rateLimits { key limit perSeconds startedInWindow held nextStartAt }
  }
`;
