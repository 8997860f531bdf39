import type { AttemptLogRepository, AttemptLogSize, AttemptLogText } from '@weft/persistence';

/**
 * The stored attempts of the tasks one answer asks for, read together in two steps: their sizes
 * ({@link sizes}), then, once the answer's budget took them, their texts ({@link texts}). Every
 * task asked for in the same turn of the event loop goes in one query of its tenant per step.
 */
export class AttemptLogLoader {
  private readonly open = new Map<string, { ids: Set<string>; rows: Promise<Map<string, unknown[]>> }>();

  constructor(private readonly repository: AttemptLogRepository) {}

  /** The stored attempts of task `taskId` of `tenantId`, oldest first, with the bytes of their texts. */
  sizes(tenantId: string, taskId: string): Promise<AttemptLogSize[]> {
    return this.batch('sizes', tenantId, taskId, (ids) => this.repository.sizesOfTasks(tenantId, ids));
  }

  /** The texts (logs, error) of the stored attempts of task `taskId` of `tenantId`, oldest first. */
  texts(tenantId: string, taskId: string): Promise<AttemptLogText[]> {
    return this.batch('texts', tenantId, taskId, (ids) => this.repository.textsOfTasks(tenantId, ids));
  }

  private async batch<T extends { taskId: string }>(kind: string, tenantId: string, taskId: string, read: (ids: string[]) => Promise<T[]>): Promise<T[]> {
    const key = `${kind}|${tenantId}`;
    let batch = this.open.get(key);
    if (!batch) {
      const ids = new Set<string>();
      const rows = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        this.open.delete(key);
        const byTask = new Map<string, unknown[]>();
        for (const row of await read([...ids])) {
          const list = byTask.get(row.taskId);
          if (list) list.push(row);
          else byTask.set(row.taskId, [row]);
        }
        return byTask;
      });
      this.open.set(key, (batch = { ids, rows }));
    }
    batch.ids.add(taskId);
    return ((await batch.rows).get(taskId) ?? []) as T[];
  }
}
