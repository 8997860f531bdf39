import type { AttemptLogRepository, AttemptLogRow } from '@weft/persistence';

/**
 * The stored attempts of the tasks one answer asks for, read together: every task asked for in
 * the same turn of the event loop goes in one query of its tenant.
 */
export class AttemptLogLoader {
  private readonly open = new Map<string, { ids: Set<string>; rows: Promise<Map<string, AttemptLogRow[]>> }>();

  constructor(private readonly repository: AttemptLogRepository) {}

  /** The stored attempts of task `taskId` of `tenantId`, oldest first. */
  async load(tenantId: string, taskId: string): Promise<AttemptLogRow[]> {
    let batch = this.open.get(tenantId);
    if (!batch) {
      const ids = new Set<string>();
      const rows = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        this.open.delete(tenantId);
        const byTask = new Map<string, AttemptLogRow[]>();
        for (const row of await this.repository.ofTasks(tenantId, [...ids])) {
          const list = byTask.get(row.taskId);
          if (list) list.push(row);
          else byTask.set(row.taskId, [row]);
        }
        return byTask;
      });
      this.open.set(tenantId, (batch = { ids, rows }));
    }
    batch.ids.add(taskId);
    return (await batch.rows).get(taskId) ?? [];
  }
}
