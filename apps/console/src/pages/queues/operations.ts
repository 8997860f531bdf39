/** The queues page's GraphQL document and the shape of its answer. */

export interface WorkerRow {
  id: string;
  queues: string[];
  concurrency: number;
  version: string;
  startedAt: string;
  lastHeartbeatAt: string;
  drainingSince: string | null;
}

export interface QueueRow {
  name: string;
  allowed: boolean;
  reserved: boolean;
  backlog: number;
  running: number;
  delayed: number;
  oldestPendingAgeMs: number | null;
  workers: { id: string }[];
}

export interface QueuesData {
  queues: QueueRow[];
  workers: WorkerRow[];
}

export const QUEUES_AND_WORKERS = /* GraphQL */ `
  query QueuesAndWorkers {
    queues { name allowed reserved backlog running delayed oldestPendingAgeMs workers { id } }
    workers { id queues concurrency version startedAt lastHeartbeatAt drainingSince }
  }
`;
