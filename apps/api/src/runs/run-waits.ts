import type { RunWait, TaskWait } from '@weft/persistence';
import type { FlowService } from '../flow/flow.service.js';
import { runWaitOf, taskWaitOf, UNSERVED_AFTER_MS, type Wait } from '../flow/wait-reason.js';
import type { LiveQueues } from '../queues/live-queues.js';
import type { RunObject, TaskObject } from './run.object.js';

/** Task statuses that wait for a worker: QUEUED (in the backlog) and PENDING (dispatched, not taken yet). */
const WAITING_FOR_WORKER = new Set(['QUEUED', 'PENDING']);

/** True for a task status whose waitReason and waitDetail may be non-null. */
export function mayWait(status: string): boolean {
  return WAITING_FOR_WORKER.has(status);
}

/**
 * Why runs and tasks wait: their backlog rows' holds (read once per page) and, for a task that
 * has waited past {@link UNSERVED_AFTER_MS} on a queue no live worker serves, that.
 */
export class RunWaits {
  constructor(
    private readonly flow: FlowService,
    private readonly live: LiveQueues,
  ) {}

  /** The waits of a page of tasks: read once, for its QUEUED tasks, when one of them is asked why it waits. */
  taskPageWaits(tenantId: string, rows: readonly { id: string; status: string }[]): () => Promise<Map<string, TaskWait>> {
    const queued = rows.filter((t) => t.status === 'QUEUED').map((t) => t.id);
    let waits: Promise<Map<string, TaskWait>> | undefined;
    return () => (waits ??= queued.length ? this.flow.taskWaits(tenantId, queued) : Promise.resolve(new Map()));
  }

  /** Why the run waits (a QUEUED run: its concurrency key's slots); null when it does not. */
  async runWait(run: RunObject): Promise<Wait | null> {
    if (run.status !== 'QUEUED') return null;
    if (!run.pageWaits) {
      let own: Promise<Map<string, RunWait>> | undefined;
      run.pageWaits = () => (own ??= this.flow.runWaits(run.tenantId, [run.id]));
    }
    const waits = await run.pageWaits();
    return runWaitOf(run.status, waits.get(run.id));
  }

  /**
   * Why the task waits: a QUEUED task's backlog row's hold, else its queue's backlog; a QUEUED or
   * PENDING task that has waited (since its last change) past {@link UNSERVED_AFTER_MS} on a
   * queue no live worker serves says so instead of the backlog. Null when it does not wait.
   */
  async taskWait(task: TaskObject, now = Date.now()): Promise<Wait | null> {
    if (!mayWait(task.status)) return null;
    const waitedMs = now - task.updatedAt.getTime();
    const unserved = task.queue !== null && waitedMs >= UNSERVED_AFTER_MS && !(await this.live.served()).has(task.queue) ? { waitedMs } : undefined;
    if (task.status !== 'QUEUED') return taskWaitOf(task.status, task.queue, undefined, unserved);
    if (!task.pageWaits) {
      let own: Promise<Map<string, TaskWait>> | undefined;
      task.pageWaits = () => (own ??= this.flow.taskWaits(task.tenantId, [task.id]));
    }
    const waits = await task.pageWaits();
    return taskWaitOf(task.status, task.queue, waits.get(task.id), unserved);
  }
}
