import type { EventJsonColumn, RunJsonColumn, RunRepository, TaskJsonColumn } from '@weft/persistence';

/** Where a stored JSON value lives: the table, its row's key and its column. */
export type StoredJsonRef =
  | { table: 'runs'; tenantId: string; id: string; column: RunJsonColumn }
  | { table: 'tasks'; tenantId: string; id: string; column: TaskJsonColumn }
  | { table: 'run_events'; tenantId: string; runId: string; seq: number; column: EventJsonColumn };

/** What the loader asks of an answer's budget (ResponseBudget): whether it was refused, and whether its sizes are all read. */
export interface ChargeGate {
  readonly refused?: unknown;
  readonly busy: boolean;
  whenSized(then: () => void): void;
}

interface Waiter {
  ref: StoredJsonRef;
  key: string;
  budget: ChargeGate;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Reads stored JSON values for one answer (or for the answers of one shared run state), in
 * batches, one statement per table: a batch is read once none of its answers is still reading
 * rows whose sizes it charges ({@link ChargeGate.whenSized}), so by then every size of those
 * answers is charged, and the values of an answer already refused are not read at all (its
 * waiters get null: the refusal is the whole answer, carried by the charge that passed the
 * limit). A value asked for twice (aliases, several subscribers) is read once.
 */
export class StoredJsonLoader {
  private readonly values = new Map<string, Promise<unknown>>();
  /** The values of {@link values} that have resolved, by key: answered without a promise ({@link loadNow}). */
  private readonly ready = new Map<string, unknown>();
  private pending: Waiter[] = [];
  private scheduled = false;

  /** `onRead(n)` learns that `n` values were read from the database. */
  constructor(
    private readonly runs: RunRepository,
    private readonly onRead?: (values: number) => void,
  ) {}

  /** Values held (read, being read or seeded). */
  get size(): number {
    return this.values.size;
  }

  /**
   * A loader for a newer state of the same rows: it starts with every value this one has read or
   * is reading, but those `changed` says changed or not to keep (keys of {@link StoredJsonRef}s,
   * see `keyOf`).
   */
  successor(changed: (key: string) => boolean): StoredJsonLoader {
    const next = new StoredJsonLoader(this.runs, this.onRead);
    for (const [key, value] of this.values) {
      if (changed(key)) continue;
      next.values.set(key, value);
      if (this.ready.has(key)) next.ready.set(key, this.ready.get(key));
      else
        void value.then(
          (v) => next.values.get(key) === value && next.ready.set(key, v),
          () => undefined,
        );
    }
    return next;
  }

  /** Sets the value at `ref` (known without a read: a change carried on a run update). */
  seed(ref: StoredJsonRef, value: unknown): void {
    const key = refKey(ref);
    this.values.set(key, Promise.resolve(value));
    this.ready.set(key, value);
  }

  /** The key of `ref` that {@link successor}'s `changed` receives. */
  static keyOf(ref: StoredJsonRef): string {
    return refKey(ref);
  }

  /**
   * {@link load}, but the value itself when it is already known (read or seeded): an answer made
   * of known values then completes without waiting on a promise for each.
   */
  loadNow(ref: StoredJsonRef, budget: ChargeGate): unknown {
    if (budget.refused) return null;
    const key = refKey(ref);
    return this.ready.has(key) ? this.ready.get(key) : this.load(ref, budget);
  }

  /** The value at `ref` for an answer whose budget is `budget` (already charged for it); null once that answer is refused. */
  load(ref: StoredJsonRef, budget: ChargeGate): Promise<unknown> {
    if (budget.refused) return Promise.resolve(null);
    const key = refKey(ref);
    const read = this.values.get(key);
    if (read) return read;
    return new Promise((resolve, reject) => {
      this.pending.push({ ref, key, budget, resolve, reject });
      this.schedule();
    });
  }

  /** Flushes after the current turn: every field of a list's items asks in the same turn. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const busy = this.pending.find((w) => !w.budget.refused && w.budget.busy);
    if (busy) return busy.budget.whenSized(() => this.schedule());
    const batch = this.pending;
    this.pending = [];
    const groups = new Map<string, Map<string, Waiter[]>>();
    for (const w of batch) {
      if (w.budget.refused) {
        w.resolve(null);
        continue;
      }
      const read = this.values.get(w.key);
      if (read) {
        read.then(w.resolve, w.reject);
        continue;
      }
      const g = `${w.ref.table}|${w.ref.tenantId}`;
      const byKey = groups.get(g) ?? groups.set(g, new Map()).get(g)!;
      const list = byKey.get(w.key);
      if (list) list.push(w);
      else byKey.set(w.key, [w]);
    }
    for (const byKey of groups.values()) {
      const read = this.read([...byKey.values()].map((ws) => ws[0]!.ref));
      for (const [key, ws] of byKey) {
        const value = read.then((rows) => rows.get(key) ?? null);
        this.values.set(key, value);
        value.then(
          (v) => this.values.get(key) === value && this.ready.set(key, v),
          () => undefined,
        );
        for (const w of ws) value.then(w.resolve, w.reject);
      }
    }
  }

  /** The values at `refs` (one table and tenant), by {@link refKey}. */
  private async read(refs: StoredJsonRef[]): Promise<Map<string, unknown>> {
    const first = refs[0]!;
    const columns = new Set(refs.map((r) => r.column));
    const rowIds = [...new Set(refs.map(rowKey))];
    let rows: Map<string, Record<string, unknown>>;
    if (first.table === 'runs') {
      rows = await this.runs.runJson(first.tenantId, rowIds, columns as Set<RunJsonColumn>);
    } else if (first.table === 'tasks') {
      rows = await this.runs.taskJson(first.tenantId, rowIds, columns as Set<TaskJsonColumn>);
    } else {
      const keys = refs.map((r) => r as Extract<StoredJsonRef, { table: 'run_events' }>).map((r) => ({ runId: r.runId, seq: r.seq }));
      rows = await this.runs.eventJson(first.tenantId, keys, columns as Set<EventJsonColumn>);
    }
    this.onRead?.(refs.length);
    return new Map(refs.map((r) => [refKey(r), rows.get(rowKey(r))?.[r.column] ?? null]));
  }
}

function rowKey(ref: StoredJsonRef): string {
  return ref.table === 'run_events' ? `${ref.runId}:${ref.seq}` : ref.id;
}

function refKey(ref: StoredJsonRef): string {
  return `${ref.table}|${ref.tenantId}|${rowKey(ref)}|${ref.column}`;
}
