import type { DataSource } from 'typeorm';
import { RunRepository, sql, withTenant, type TaskEntity } from '@weft/persistence';
import { type JsonValue, type TaskJob, type WorkflowDefinition } from '@weft/engine';
import { RunCoordinator, type RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTenant, ManualClock, MemoryLogger, publishWorkflow, RecordingDispatcher, RecordingPublisher } from './builders.js';

/**
 * A tenant with its own coordinator over `ds`, recording ports and a hand-moved clock, plus the
 * story helpers the coordinator suites share: publish and start, read back the run, its tasks,
 * history and outbox, and report the current job of a node completed or failed.
 */
export async function coordinatorHarness(ds: DataSource, opts: RunCoordinatorOptions = {}) {
  const { tenantId } = await createTenant(ds);
  const clock = new ManualClock();
  const dispatcher = new RecordingDispatcher();
  const publisher = new RecordingPublisher();
  const logger = new MemoryLogger();
  // Nothing claims the harness's jobs, so no window of admitted jobs ever frees: admit everything
  // unless the test is about the window.
  const coordinator = new RunCoordinator(ds, dispatcher, publisher, { now: clock.now, logger, dispatchWindowFloor: 1_000_000, ...opts });
  const runs = new RunRepository(ds);

  const h = {
    tenantId,
    clock,
    dispatcher,
    publisher,
    logger,
    coordinator,
    async publish(definition: WorkflowDefinition, workflowId?: string) {
      return publishWorkflow(ds, tenantId, definition, { workflowId });
    },
    /** Publishes `definition` and starts a run of it. */
    async start(definition: WorkflowDefinition, extra: { input?: JsonValue; idempotencyKey?: string; priority?: number } = {}) {
      const { workflowId } = await h.publish(definition);
      const { runId } = await coordinator.runs.startRun(tenantId, { workflowId, ...extra });
      return runId;
    },
    async run(runId: string) {
      return (await runs.findRun(tenantId, runId))!;
    },
    async tasks(runId: string): Promise<Record<string, TaskEntity>> {
      return Object.fromEntries((await runs.tasksOfRun(tenantId, runId)).map((t) => [t.nodeId, t]));
    },
    async statuses(runId: string): Promise<Record<string, string>> {
      return Object.fromEntries((await runs.tasksOfRun(tenantId, runId)).map((t) => [t.nodeId, t.status]));
    },
    async events(runId: string) {
      return runs.eventsOfRun(tenantId, runId);
    },
    async outbox(runId: string) {
      const r = await withTenant(ds, tenantId, (m) =>
        sql<{
          task_id: string;
          attempt: number;
          queue: string;
          not_before: Date;
          enqueued_at: Date | null;
          hold_reason: string | null;
          held_until: Date | null;
        }>(m, `SELECT task_id, attempt, queue, not_before, enqueued_at, hold_reason, held_until FROM outbox WHERE tenant_id = $1 AND run_id = $2 ORDER BY id`, [
          tenantId,
          runId,
        ]),
      );
      return r.rows;
    },
    async signalCount(runId: string) {
      const r = await withTenant(ds, tenantId, (m) =>
        sql<{ n: string }>(m, `SELECT count(*) AS n FROM signals WHERE tenant_id = $1 AND run_id = $2`, [tenantId, runId]),
      );
      return Number(r.rows[0]!.n);
    },
    /** Reports the current job of `nodeId` completed. */
    async complete(nodeId: string, output: unknown = {}, job: TaskJob = dispatcher.last(nodeId)) {
      return coordinator.runs.reportCompleted(tenantId, { runId: job.runId, taskId: job.taskId, nodeId, attempt: job.attempt, output: output as never });
    },
    async fail(nodeId: string, error = 'boom', job: TaskJob = dispatcher.last(nodeId)) {
      return coordinator.runs.reportFailed(tenantId, { runId: job.runId, taskId: job.taskId, nodeId, attempt: job.attempt, error });
    },
  };
  return h;
}
