import { ConcurrencyGroupRepository, type GroupOfRun, type RunState, type Transaction } from '@weft/persistence';
import {
  runConcurrencyKey,
  runFlowOf,
  RunStatus,
  WeftError,
  type ConcurrencyStrategy,
  type JsonValue,
  type RunChange,
  type RunEvent,
  type WorkflowDag,
} from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { LinkedWork, LockedRunEvents } from './event-outcome.js';

/** What a start does once its group's row is locked: start the run, queue it, or cancel it or the oldest. */
export type Admission = { start: true } | { start: false; strategy: ConcurrencyStrategy; limit: number; active: number };

/**
 * Run slots of concurrency keys. A run of a workflow with `concurrency` joins a group, the
 * workflow's (or with `scope: tenant` the tenant's) runs whose key resolved to the same text, and
 * holds one of its `limit` slots from the moment it runs until it ends. Every decision locks the
 * group's row (`concurrency_groups`) and counts the group's runs from `runs`, in the transaction
 * that starts or ends a run, so a slot can no more leak than a run can stay RUNNING.
 *
 * Child runs are not limited by their workflow's `concurrency`: they run inside their parent's
 * slot, so a child never waits for a slot its ancestor holds.
 */
export class RunSlots {
  /** `events` applies the RunStarted of a queued run that a freed slot admits. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly events: LockedRunEvents,
  ) {}

  /**
   * The group a top-level run of `dag` with `input` and `config` joins; undefined when its
   * definition has no `concurrency`.
   * @throws WeftError BAD_USER_INPUT when the key does not resolve to a string or number of at
   * most 256 characters (the message names `concurrency.key`).
   */
  groupOf(dag: WorkflowDag, workflowId: string, input: JsonValue, config: JsonValue): GroupOfRun | undefined {
    const flow = runFlowOf(dag.definition).concurrency;
    if (!flow) return undefined;
    const resolved = runConcurrencyKey(dag.definition, input, config, this.ctx.templates);
    if ('error' in resolved) throw new WeftError('BAD_USER_INPUT', `cannot start a run of workflow ${workflowId}: ${resolved.error}`);
    const { key } = resolved;
    const tenantWide = flow.scope === 'tenant';
    return {
      groupKey: tenantWide ? `tenant:${key}` : `workflow:${workflowId}/${key}`,
      scope: flow.scope,
      workflowId: tenantWide ? null : workflowId,
      key,
      limit: flow.limit,
    };
  }

  /** Locks `group`'s row in `m` (its limit becomes this version's) and decides whether a new run of it starts now. */
  async admission(m: Transaction, tenantId: string, group: GroupOfRun, dag: WorkflowDag, now: Date): Promise<Admission> {
    const repo = new ConcurrencyGroupRepository(m);
    await repo.lock(tenantId, group, now);
    const { active } = await repo.counts(tenantId, group.groupKey);
    if (active < group.limit) return { start: true };
    return { start: false, strategy: runFlowOf(dag.definition).concurrency!.strategy, limit: group.limit, active };
  }

  /**
   * Before run `run` (locked in `m`) is retried on `dag`, its retry's version's definition, with
   * `input` and `config` (the retry's, else the run's): a top-level run that ended takes a slot
   * again in the group this version and input resolve to (its key is resolved again, so a retry
   * that changes the key or adds `concurrency` counts where it will run), and the run row is set
   * to that group (none when the version has no `concurrency`). The group's row is locked (made
   * again if an upkeep deleted it) and its RUNNING runs counted against `dag`'s limit, whatever
   * the strategy: a retry never cancels another run, nor waits. A RUNNING run keeps its slot.
   * @throws WeftError CONFLICT when the run is still QUEUED for a slot (it has not started: there
   * is nothing to retry), or when the group has no free slot — naming the key, the limit and how
   * many runs hold it; BAD_USER_INPUT when the key does not resolve.
   */
  async readmit(m: Transaction, tenantId: string, run: RunState, dag: WorkflowDag, input: JsonValue, config: JsonValue, now: Date): Promise<void> {
    if (run.parentRunId !== null || run.status === RunStatus.Running) return;
    const repo = new ConcurrencyGroupRepository(m);
    if (run.status === RunStatus.Queued) {
      const key = run.concurrencyGroup === null ? undefined : await repo.lockExisting(tenantId, run.concurrencyGroup);
      throw new WeftError(
        'CONFLICT',
        `run ${run.id} is QUEUED for a slot of concurrency key ${JSON.stringify(key ?? run.concurrencyGroup)} and has not started: nothing to retry; it starts when a slot frees, or cancel it`,
      );
    }
    const group = this.groupOf(dag, run.workflowId, input, config);
    if (group?.groupKey !== run.concurrencyGroup) await repo.setRunGroup(tenantId, run.id, group ?? null);
    run.concurrencyGroup = group?.groupKey ?? null;
    if (!group) return;
    await repo.lock(tenantId, group, now);
    const { active } = await repo.counts(tenantId, group.groupKey);
    if (active < group.limit) return;
    throw new WeftError(
      'CONFLICT',
      `run ${run.id} cannot be retried now: concurrency limit ${group.limit} reached for key ${JSON.stringify(group.key)} (${active} running); retry it when a slot frees, or cancel one of the running runs`,
    );
  }

  /** The oldest RUNNING run of the group (locked by {@link admission}), for `cancel_oldest`. */
  oldestActive(m: Transaction, tenantId: string, groupKey: string): Promise<string | undefined> {
    return new ConcurrencyGroupRepository(m).oldestActive(tenantId, groupKey);
  }

  /**
   * After a run of group `groupKey` ended in `m`: starts the group's QUEUED runs, priority first,
   * then oldest, while a slot is free by each run's own version's limit. Their RunStarted events
   * go in `m` too, at `linked.now`, and what they did joins `linked.nested` for after-commit.
   * Deeper than one level of runs started in one transaction (`nesting` > 0), they are left to
   * the scheduler's pass over stalled groups (see `OutboxRelay`).
   */
  async promote(m: Transaction, tenantId: string, groupKey: string, linked: LinkedWork, nesting: number): Promise<void> {
    if (nesting > 0) return;
    const repo = new ConcurrencyGroupRepository(m);
    if ((await repo.lockExisting(tenantId, groupKey)) === undefined) return;
    let { active } = await repo.counts(tenantId, groupKey);
    for (const run of await repo.nextQueued(tenantId, groupKey, 100)) {
      const dag = await this.ctx.dag(m, tenantId, run.workflowId, run.version);
      const limit = runFlowOf(dag.definition).concurrency?.limit ?? Infinity;
      if (active >= limit) break;
      if (!(await repo.admit(tenantId, run.id, linked.now))) continue;
      active++;
      const seconds = Math.max(0, (linked.now.getTime() - new Date(run.createdAt).getTime()) / 1000);
      this.ctx.observe((o) => o.flowDispatched?.({ queue: null, waits: [{ reason: 'CONCURRENCY_LIMIT', seconds }] }));
      const ev: RunEvent = run.startNodeId ? { type: 'RunStarted', startNodeId: run.startNodeId } : { type: 'RunStarted' };
      const started = await this.events.applyReport({
        m,
        tenantId,
        run: { ...run, status: RunStatus.Running },
        nodes: new Map(),
        dag,
        ev,
        now: linked.now,
        nesting: nesting + 1,
      });
      if (started.kind === 'applied') {
        // The admission set the run RUNNING besides the event's own writes: its change says so too.
        const change = started.change;
        started.change = () => withStatus(change(), RunStatus.Running);
      }
      linked.nested.push({ runId: run.id, outcome: started });
    }
  }
}

/** `change` with the run's status set to `status` (undefined stays undefined). */
function withStatus(change: RunChange | undefined, status: RunStatus): RunChange | undefined {
  return change && { ...change, run: { ...change.run, status } };
}
