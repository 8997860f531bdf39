import type { TakenTask } from '@weft/engine';
import type { coordinatorHarness } from './coordinator-harness.js';
import { createTenant, def, edge, http } from './builders.js';
import type { TestDatabase } from './test-database.js';

/**
 * Story helpers of the fenced-step suites: a worker that claims a run's first job and reports
 * each attempt completed, taking its next attempt with the report (eager dispatch), so that every
 * report after the run's first is decided from memory and written through the step committer.
 */

export type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** A chain of `n` HTTP nodes `n1 → n2 → … → nn`. */
export const chain = (n: number) => {
  const ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
  return def(
    ids.map((id) => http(id)),
    ids.slice(1).map((id, i) => edge(ids[i]!, id)),
  );
};

/** Claims the run's first job as a worker would; the attempt it holds. */
export async function claimFirst(h: Harness, runId: string): Promise<TakenTask> {
  const job = h.dispatcher.jobs.find((j) => j.runId === runId)!;
  const claim = await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue);
  return { job, leaseToken: claim!.leaseToken };
}

/** Claims the last job offered for `nodeId` of `runId` as a worker would; the attempt it holds. */
export async function claimLast(h: Harness, runId: string, nodeId: string): Promise<TakenTask> {
  const job = [...h.dispatcher.jobs].reverse().find((j) => j.runId === runId && j.nodeId === nodeId);
  if (!job) throw new Error(`no job offered for ${nodeId}`);
  const c = await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue);
  if (!c) throw new Error(`job of ${nodeId} could not be claimed`);
  return { job, leaseToken: c.leaseToken };
}

/** Reports `held` completed with `output` as a worker taking its next attempt; the attempt it took, if any. */
export async function step(h: Harness, held: TakenTask, output: unknown = { step: held.job.nodeId }) {
  const { job, leaseToken } = held;
  return h.coordinator.runs.reportCompleted(h.tenantId, {
    runId: job.runId,
    taskId: job.taskId,
    nodeId: job.nodeId,
    attempt: job.attempt,
    leaseToken,
    output: output as never,
    takeFrom: job.queue,
  });
}

/** Runs a chain to its end through reports that take their next attempt; resolves the run id. */
export async function runChain(h: Harness, workflowId: string): Promise<string> {
  const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
  let held: TakenTask | undefined = await claimFirst(h, runId);
  while (held) held = (await step(h, held)).taken;
  return runId;
}

/** The rows a start wrote, without what differs between two runs (ids, times). */
export async function startRows(h: Harness, runId: string) {
  const run = await h.run(runId);
  const tasks = Object.values(await h.tasks(runId))
    .map((t) => ({
      nodeId: t.nodeId,
      status: t.status,
      attempt: t.attempt,
      input: t.input,
      output: t.output,
      error: t.error,
      queue: t.queue,
      branches: t.branches,
      wakeAt: t.wakeAt,
      awaitedSignal: t.awaitedSignal,
      leaseToken: t.leaseToken,
      finishedAt: t.finishedAt,
    }))
    .sort((a, b) => a.nodeId.localeCompare(b.nodeId));
  const outbox = (await h.outbox(runId))
    .map((o) => ({ attempt: o.attempt, queue: o.queue, hold: o.hold_reason, notBefore: o.not_before }))
    .sort((a, b) => a.queue.localeCompare(b.queue));
  return {
    run: {
      status: run.status,
      version: run.version,
      eventSeq: run.eventSeq,
      input: run.input,
      config: run.config,
      priority: run.priority,
      idempotencyKey: run.idempotencyKey,
      startNodeId: run.startNodeId,
      output: run.output,
      error: run.error,
      finishedAt: run.finishedAt,
    },
    tasks,
    outbox,
    jobs: h.dispatcher.jobs
      .filter((j) => j.runId === runId)
      .map((j) => ({ nodeId: j.nodeId, attempt: j.attempt, queue: j.queue, input: j.input }))
      .sort((a, b) => a.nodeId.localeCompare(b.nodeId)),
    history: await shape(h, runId),
  };
}

/**
 * Another tenant's ready attempt on `queue` in `db`'s backlog (written as the owner, its foreign
 * keys off: it names no real run), ahead in fair order of any take from that queue.
 */
export async function otherTenantWaits(db: TestDatabase, queue = 'http'): Promise<void> {
  const other = await createTenant(db.ds);
  await db.owner.transaction(async (m) => {
    await m.query(`SET LOCAL session_replication_role = replica`);
    await m.query(
      `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before) VALUES ($1, gen_random_uuid(), gen_random_uuid(), 0, $2, now())`,
      [other.tenantId, queue],
    );
  });
}

/** A run's history without what differs between two runs (ids, times). */
export async function shape(h: Harness, runId: string) {
  return (await h.events(runId)).map((e) => ({
    seq: e.seq,
    type: e.type,
    nodeId: e.nodeId,
    attempt: e.attempt,
    ignored: e.ignored,
    error: e.error,
    actions: (e.actions as { type: string }[]).map((a) => a.type),
  }));
}

/** Resolves once `check()` is true, polling every 5 ms; rejects after `tries` polls. */
export async function until(check: () => boolean | Promise<boolean>, what: string, tries = 2_000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}
