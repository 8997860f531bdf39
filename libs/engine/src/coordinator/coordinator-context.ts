import { v7 as uuidv7 } from 'uuid';
import { RunEventRepository, VersionLookupRepository, withTenant, type Database, type Transaction } from '@weft/persistence';
import {
  CelTemplateResolver,
  DEFAULT_MAX_INPUT_BYTES,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_RUN_TREE,
  DEFAULT_MAX_SUBWORKFLOW_DEPTH,
  WeftError,
  DEFAULT_MAX_VALUE_BYTES,
  MIN_SCHEDULE_GRACE_SECONDS,
  type Deps,
  type Store,
  type TaskDispatcher,
  type RunUpdatePublisher,
  type TemplateResolver,
  type WorkflowDag,
  type WorkflowDefinition,
} from '../index.js';
import type { CoordinatorLogger, CoordinatorObserver, RunCoordinatorOptions } from './coordinator-options.js';
import { DagCache } from './dag-cache.js';
import { isTransient, message } from './error-mapping.js';
import { DEFAULT_MAX_BUFFERED_SIGNAL_BYTES, DEFAULT_MAX_BUFFERED_SIGNALS, type SignalBufferCaps } from './signal-buffer.js';
import { SnapshotCache } from './snapshot-cache.js';
import { StartVersions } from './versions.js';

/** The jobs a queue may hold waiting for a worker when no live worker says how many slots it has. */
export const DEFAULT_DISPATCH_WINDOW_FLOOR = 8;

/**
 * What every room of the coordinator shares: the database, the ports, the settings with their
 * defaults applied, the DAG and snapshot caches, the clock and the retry of transient failures.
 */
export class CoordinatorContext {
  /** The injected test clock; undefined in production (the database's clock is used). */
  readonly testClock: (() => Date) | undefined;
  readonly newId: () => string;
  readonly log: CoordinatorLogger;
  readonly observer: CoordinatorObserver | undefined;
  readonly templates: TemplateResolver;
  readonly timerLeaseMs: number;
  readonly batchRunsPerSecond: number;
  readonly scheduleGraceMs: number;
  readonly dispatchLeaseMs: number;
  readonly dispatchWindowFloor: number;
  readonly runLeaseMs: number;
  readonly maxOutputBytes: number;
  readonly maxInputBytes: number;
  readonly maxSubworkflowDepth: number;
  readonly maxRunTree: number;
  readonly signalCaps: SignalBufferCaps;
  /** Whether workers' reports may take the fenced path (see `FencedSteps`). */
  readonly fencedSteps: boolean;
  readonly snapshots = new SnapshotCache();
  /** The versions this process's starts ran on, for starts decided from memory. */
  readonly startVersions = new StartVersions();
  private readonly maxRetries: number;
  private readonly dags: DagCache;
  /** The database's clock minus this process's, ms, at the last reading; undefined before any. */
  private clockOffsetMs: number | undefined;

  constructor(
    readonly ds: Database,
    readonly dispatcher: TaskDispatcher,
    readonly publisher: RunUpdatePublisher,
    opts: RunCoordinatorOptions = {},
  ) {
    this.testClock = opts.now;
    this.newId = opts.newId ?? (() => uuidv7());
    this.log = opts.logger ?? { warn: (m) => console.warn(m), error: (m) => console.error(m) };
    this.observer = opts.observer;
    this.maxRetries = Math.max(0, opts.maxEventRetries ?? 5);
    this.templates = opts.templates ?? new CelTemplateResolver();
    this.dags = new DagCache(opts.dagCacheSize);
    this.timerLeaseMs = opts.timerLeaseMs ?? 10_000;
    this.batchRunsPerSecond = opts.batchRunsPerSecond ?? 100;
    this.scheduleGraceMs = opts.scheduleGraceMs ?? MIN_SCHEDULE_GRACE_SECONDS * 1000;
    this.dispatchLeaseMs = opts.dispatchLeaseMs ?? 30_000;
    this.dispatchWindowFloor = opts.dispatchWindowFloor ?? DEFAULT_DISPATCH_WINDOW_FLOOR;
    this.runLeaseMs = opts.runLeaseMs ?? 15_000;
    this.maxOutputBytes = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.maxInputBytes = opts.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
    this.maxSubworkflowDepth = opts.maxSubworkflowDepth ?? DEFAULT_MAX_SUBWORKFLOW_DEPTH;
    this.maxRunTree = opts.maxRunTree ?? DEFAULT_MAX_RUN_TREE;
    this.fencedSteps = opts.fencedSteps ?? true;
    this.signalCaps = {
      maxSignals: opts.maxBufferedSignals ?? DEFAULT_MAX_BUFFERED_SIGNALS,
      maxBytes: opts.maxBufferedSignalBytes ?? DEFAULT_MAX_BUFFERED_SIGNAL_BYTES,
    };
  }

  /** Tells the observer, if any, through `tell`; an observer that throws is logged, never rethrown. */
  observe(tell: (o: CoordinatorObserver) => void): void {
    if (!this.observer) return;
    try {
      tell(this.observer);
    } catch (err) {
      this.log.warn(`observer failed: ${message(err)}`);
    }
  }

  /** Runs `fn` in a transaction bound to `tenantId`, retried when transient (see {@link retrying}). */
  inTenant<T>(what: string, tenantId: string, fn: (m: Transaction) => Promise<T>): Promise<T> {
    return this.retrying(what, () => withTenant(this.ds, tenantId, fn));
  }

  /** Runs `fn` again after transient failures (bounded, jittered), then throws WeftError TRANSIENT. */
  async retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!isTransient(err)) throw err;
        if (attempt >= this.maxRetries) {
          throw new WeftError('TRANSIENT', `${what} failed after ${attempt + 1} attempt(s): ${message(err)}`);
        }
        const base = Math.min(200, 5 * 2 ** attempt);
        await new Promise((r) => setTimeout(r, base + Math.random() * base));
      }
    }
  }

  /** The event clock inside transaction `m` of `tenantId`: the test clock, else the database's `clock_timestamp()`. */
  async clock(m: Transaction, tenantId: string): Promise<Date> {
    return this.testClock?.() ?? new RunEventRepository(m).clock(tenantId);
  }

  /** Remembers how far the database's clock is from this process's, from `dbNow`, a reading just received. */
  noteDbClock(dbNow: Date): void {
    this.clockOffsetMs = dbNow.getTime() - Date.now();
  }

  /**
   * The event clock without a round trip: the test clock, else this process's clock moved by the
   * offset of the database's last reading ({@link noteDbClock}); undefined before any reading.
   * Off by the reading's transit time (well under a millisecond on a local network).
   */
  estimatedClock(): Date | undefined {
    if (this.testClock) return this.testClock();
    return this.clockOffsetMs === undefined ? undefined : new Date(Date.now() + this.clockOffsetMs);
  }

  /**
   * The test clock's reading, or null in production: statements then use the database's clock
   * (`COALESCE($n::timestamptz, clock_timestamp())`, or `now()` in the claim functions).
   */
  testNow(): Date | null {
    return this.testClock ? this.testClock() : null;
  }

  /** The machine's dependencies for one event at clock reading `now`, reading through `store`. */
  machineDeps(store: Store, now: Date): Deps {
    return {
      templates: this.templates,
      store,
      now: () => now,
      newId: this.newId,
      maxSubworkflowDepth: this.maxSubworkflowDepth,
      maxRunTree: this.maxRunTree,
      // A value the machine computes may embed a whole task output: allow at least that much.
      maxValueBytes: Math.max(DEFAULT_MAX_VALUE_BYTES, this.maxOutputBytes),
    };
  }

  /** The DAG of a version when the cache holds it, else undefined (nothing is loaded). */
  cachedDag(tenantId: string, workflowId: string, version: number): WorkflowDag | undefined {
    return this.dags.peek(tenantId, workflowId, version);
  }

  /** The DAG of a version, from the cache or loaded in transaction `m`. @throws WeftError NOT_FOUND. */
  async dag(m: Transaction, tenantId: string, workflowId: string, version: number): Promise<WorkflowDag> {
    const dag = await this.dags.get(tenantId, workflowId, version, async () => {
      return (await new VersionLookupRepository(m).definition(tenantId, workflowId, version)) as WorkflowDefinition | undefined;
    });
    if (!dag) throw new WeftError('NOT_FOUND', `workflow ${workflowId} version ${version} not found`);
    return dag;
  }
}
