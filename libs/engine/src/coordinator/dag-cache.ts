import { buildDag, type WorkflowDag, type WorkflowDefinition } from '../index.js';

/** Default number of workflow versions a {@link DagCache} keeps. */
export const DAG_CACHE_SIZE = 512;

/**
 * A bounded LRU of built DAGs keyed by (tenant, workflow, version). Published versions are
 * immutable, so an entry never goes stale; it is only evicted when the cache is full (least
 * recently used first). Per process, shared by every event the coordinator applies.
 */
export class DagCache {
  private readonly entries = new Map<string, WorkflowDag>();

  /** `maxEntries`: how many versions to keep (default {@link DAG_CACHE_SIZE}, at least 1). */
  constructor(private readonly maxEntries = DAG_CACHE_SIZE) {}

  /**
   * The DAG of that version: from the cache, or built from the definition `load` returns (and
   * cached). Returns `undefined`, caching nothing, when `load` finds no such version.
   * Rejects with whatever `load` rejects with.
   */
  async get(tenantId: string, workflowId: string, version: number, load: () => Promise<WorkflowDefinition | undefined>): Promise<WorkflowDag | undefined> {
    const key = cacheKey(tenantId, workflowId, version);
    const hit = this.entries.get(key);
    if (hit) {
      // Re-insert: Map iteration order is insertion order, so the first key is the LRU one.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const def = await load();
    if (!def) return undefined;
    const dag = buildDag(def);
    this.entries.set(key, dag);
    while (this.entries.size > Math.max(1, this.maxEntries)) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    return dag;
  }

  /** The cached DAG of a version, or undefined; never loads. */
  peek(tenantId: string, workflowId: string, version: number): WorkflowDag | undefined {
    return this.entries.get(cacheKey(tenantId, workflowId, version));
  }

  /** How many DAGs are cached. */
  get size(): number {
    return this.entries.size;
  }
}

/** A version's key in the cache. */
function cacheKey(tenantId: string, workflowId: string, version: number): string {
  return `${tenantId}\u0000${workflowId}\u0000${version}`;
}
