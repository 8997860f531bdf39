import type { EventJsonColumn, RunJsonColumn, RunRepository, TaskJsonColumn } from '@weft/persistence';

/** Where a stored JSON value lives: the table, its row's key and its column. */
export type StoredJsonRef =
  | { table: 'runs'; tenantId: string; id: string; column: RunJsonColumn }
  | { table: 'tasks'; tenantId: string; id: string; column: TaskJsonColumn }
  | { table: 'run_events'; tenantId: string; runId: string; seq: number; column: EventJsonColumn };

interface Waiter {
  ref: StoredJsonRef;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Reads stored JSON values for one answer, in batches: the values asked for until the event loop
 * turns (every item of a list resolves its fields in the same turn) are read with one statement
 * per table. A value asked for twice (aliases) is read once.
 */
export class StoredJsonLoader {
  private readonly values = new Map<string, Promise<unknown>>();
  private pending: Waiter[] = [];

  constructor(private readonly runs: RunRepository) {}

  load(ref: StoredJsonRef): Promise<unknown> {
    const key = refKey(ref);
    let value = this.values.get(key);
    if (!value) {
      value = new Promise((resolve, reject) => {
        if (this.pending.length === 0) setImmediate(() => void this.flush());
        this.pending.push({ ref, resolve, reject });
      });
      this.values.set(key, value);
    }
    return value;
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    const groups = new Map<string, Waiter[]>();
    for (const w of batch) {
      const g = `${w.ref.table}|${w.ref.tenantId}`;
      const list = groups.get(g);
      if (list) list.push(w);
      else groups.set(g, [w]);
    }
    await Promise.all([...groups.values()].map((ws) => this.read(ws)));
  }

  private async read(ws: Waiter[]): Promise<void> {
    try {
      const first = ws[0]!.ref;
      const columns = new Set(ws.map((w) => w.ref.column));
      let rows: Map<string, Record<string, unknown>>;
      if (first.table === 'runs') {
        rows = await this.runs.runJson(first.tenantId, ids(ws), columns as Set<RunJsonColumn>);
      } else if (first.table === 'tasks') {
        rows = await this.runs.taskJson(first.tenantId, ids(ws), columns as Set<TaskJsonColumn>);
      } else {
        const keys = ws.map((w) => w.ref as Extract<StoredJsonRef, { table: 'run_events' }>).map((r) => ({ runId: r.runId, seq: r.seq }));
        rows = await this.runs.eventJson(first.tenantId, keys, columns as Set<EventJsonColumn>);
      }
      for (const w of ws) w.resolve(rows.get(rowKey(w.ref))?.[w.ref.column] ?? null);
    } catch (err) {
      for (const w of ws) w.reject(err);
    }
  }
}

function ids(ws: Waiter[]): string[] {
  return [...new Set(ws.map((w) => rowKey(w.ref)))];
}

function rowKey(ref: StoredJsonRef): string {
  return ref.table === 'run_events' ? `${ref.runId}:${ref.seq}` : ref.id;
}

function refKey(ref: StoredJsonRef): string {
  return `${ref.table}|${ref.tenantId}|${rowKey(ref)}|${ref.column}`;
}
