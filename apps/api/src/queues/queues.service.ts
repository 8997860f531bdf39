import { Injectable } from '@nestjs/common';
import { QueueReservationRepository, QueueViewRepository, WorkerRegistryRepository, type WorkerRecord } from '@weft/persistence';
import type { Principal } from '../auth/principal.js';
import type { QueueObject, WorkerObject } from './queue.object.js';

/**
 * The queues and workers as a tenant sees them. Queue counts are over the tenant's own tasks, in
 * its tenant transaction. Workers serve every tenant, so they are shown to all, with two limits:
 * a queue reserved for other tenants is left out (of the queue list and of every worker's
 * queues; a worker serving none of the tenant's queues is left out), and a worker's host and pid,
 * which describe the operator's machines, are null for every key, admin keys included: the
 * operator reads them with `weft admin workers`.
 */
@Injectable()
export class QueuesService {
  constructor(
    private readonly view: QueueViewRepository,
    private readonly registry: WorkerRegistryRepository,
    private readonly reservations: QueueReservationRepository,
  ) {}

  /**
   * The queues the tenant has active tasks on or a live worker serves (a queue reserved for
   * other tenants only when the tenant has tasks there), by name, each with its live workers.
   */
  async queues(p: Principal): Promise<QueueObject[]> {
    const live = await this.registry.live();
    const rows = await this.view.queues(p.tenantId, [...new Set(live.flatMap((w) => w.queues))]);
    const allowed = new Set(rows.filter((r) => r.access !== 'denied').map((r) => r.queue));
    return rows.map((r) => ({
      name: r.queue,
      backlog: r.backlog,
      running: r.running,
      delayed: r.delayed,
      oldestPendingAgeMs: r.oldestPendingAgeMs,
      reserved: r.access !== 'shared',
      allowed: r.access !== 'denied',
      workers: live.filter((w) => w.queues.includes(r.queue)).map((w) => toWorkerObject(w, allowed)),
    }));
  }

  /** The live workers serving at least one queue the tenant may use, oldest first. */
  async workers(p: Principal): Promise<WorkerObject[]> {
    const live = await this.registry.live();
    const access = await this.reservations.access(
      p.tenantId,
      live.flatMap((w) => w.queues),
    );
    const allowed = new Set([...access].filter(([, a]) => a !== 'denied').map(([q]) => q));
    return live.filter((w) => w.queues.some((q) => allowed.has(q))).map((w) => toWorkerObject(w, allowed));
  }
}

/** `w` as a tenant may see it: only the queues in `allowed`; never its host or pid. */
function toWorkerObject(w: WorkerRecord, allowed: ReadonlySet<string>): WorkerObject {
  return {
    id: w.id,
    host: null,
    pid: null,
    version: w.version,
    queues: w.queues.filter((q) => allowed.has(q)),
    concurrency: w.concurrency,
    startedAt: w.startedAt,
    lastHeartbeatAt: w.lastHeartbeatAt,
    drainingSince: w.drainingSince,
  };
}
