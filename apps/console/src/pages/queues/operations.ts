import type { QueuesAndWorkersQuery } from '../../api/generated/graphql.js';

/** The queues page's GraphQL document and the shape of its answer (generated from it). */

export type QueuesData = QueuesAndWorkersQuery;
export type QueueRow = QueuesAndWorkersQuery['queues'][number];
export type WorkerRow = QueuesAndWorkersQuery['workers'][number];

export const QUEUES_AND_WORKERS = /* GraphQL */ `
  query QueuesAndWorkers {
    queues { name allowed reserved backlog running delayed oldestPendingAgeMs workers { id } }
    workers { id queues concurrency version startedAt lastHeartbeatAt drainingSince }
  }
`;
