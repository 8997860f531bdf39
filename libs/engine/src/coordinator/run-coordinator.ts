import type { Database, StepCommitter } from '@weft/persistence';
import type { RunUpdatePublisher, TaskDispatcher } from '../index.js';
import { BacklogDispatch } from './backlog-dispatch.js';
import { CoordinatorContext } from './coordinator-context.js';
import type { RunCoordinatorOptions } from './coordinator-options.js';
import { DueTimers } from './due-timers.js';
import { EventPipeline } from './event-pipeline.js';
import { FencedStarts } from './fenced-starts.js';
import { FencedSteps } from './fenced-steps.js';
import { LostTaskSweep } from './lost-task-sweep.js';
import { MachineStep } from './machine-step.js';
import { OutboxRelay } from './outbox-relay.js';
import { RunCommands } from './run-commands.js';
import { RunReports } from './run-reports.js';
import { RunBatches } from './run-batches.js';
import { RunRetention } from './run-retention.js';
import { RunStarts } from './run-starts.js';
import { ScheduleFires } from './schedule-fires.js';
import { TaskLeases } from './task-leases.js';
import { UserCommands } from './user-commands.js';

/**
 * The shell around the pure state machine, composed over one database: its rooms share one
 * context (settings, caches, clock). `runs` takes the commands of users, workers and timers and
 * applies each as one event in one tenant transaction; `leases` is the worker's claim and
 * heartbeat; `timers`, `outbox`, `lostTasks`, `schedules` and `retention` are the scheduler's jobs (`schedules` also takes a user's trigger).
 */
export class RunCoordinator {
  /** Commands and reports, each applied as one event. */
  readonly runs: RunCommands;
  /** A worker's claim of a task attempt and its heartbeats. */
  readonly leases: TaskLeases;
  /** Due timers, fired by the scheduler. */
  readonly timers: DueTimers;
  /** The outbox relay, run by the scheduler. */
  readonly outbox: OutboxRelay;
  /** The lost-task sweep, run by the scheduler. */
  readonly lostTasks: LostTaskSweep;
  /** Schedules' fires: by the scheduler's clock, and a user's trigger. */
  readonly schedules: ScheduleFires;
  /** Run retention: expired run trees deleted, run by the scheduler. */
  readonly retention: RunRetention;
  /** Bulk actions over runs: created by the API, worked through by the scheduler. */
  readonly batches: RunBatches;
  /** The committer of workers' fenced reports (its counts tell how reports were written). */
  readonly committer: StepCommitter;

  constructor(ds: Database, dispatcher: TaskDispatcher, publisher: RunUpdatePublisher, opts: RunCoordinatorOptions = {}) {
    const ctx = new CoordinatorContext(ds, dispatcher, publisher, opts);
    const backlog = new BacklogDispatch(ctx);
    // Every event on a locked run goes through one step, which owns the run slots it frees.
    const step = new MachineStep(ctx);
    const fenced = new FencedSteps(ctx);
    this.committer = fenced.committer;
    const pipeline = new EventPipeline(ctx, step, step.slots, fenced, backlog);
    const starts = new RunStarts(ctx, step, step.slots);
    this.runs = new RunCommands(
      new UserCommands(ctx, pipeline, pipeline.after, starts, new FencedStarts(ctx, fenced.committer)),
      new RunReports(ctx, pipeline),
    );
    this.schedules = new ScheduleFires(ctx, starts, pipeline.after);
    this.leases = new TaskLeases(ctx, backlog);
    this.timers = new DueTimers(ctx, pipeline);
    this.outbox = new OutboxRelay(ctx, backlog, step.slots, pipeline.after);
    this.lostTasks = new LostTaskSweep(ctx, backlog);
    this.retention = new RunRetention(ctx);
    this.batches = new RunBatches(ctx, this.runs);
  }
}
