/** WaitReason values as people read them. */
const LABELS: Readonly<Record<string, string>> = {
  CONCURRENCY_LIMIT: 'concurrency limit',
  RATE_LIMIT: 'rate limit',
  QUEUE_BACKLOG: 'queue backlog',
  RUN_PAUSED: 'run paused',
  NO_LIVE_WORKER: 'no live worker',
};

/** A WaitReason as people read it (`concurrency limit`); an unknown one as the API sent it. */
export function waitReasonLabel(reason: string): string {
  return LABELS[reason] ?? reason;
}
