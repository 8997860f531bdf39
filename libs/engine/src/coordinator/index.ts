/**
 * @weft/engine/coordinator: the shell around the pure state machine — the only code that turns
 * events into rows, over @weft/persistence. Apps compose a {@link RunCoordinator} and call its
 * rooms.
 */
export * from './run-coordinator.js';
export * from './coordinator-options.js';
export * from './inputs.js';
export { RunCommands } from './run-commands.js';
export { TaskLeases } from './task-leases.js';
export { DueTimers } from './due-timers.js';
export { OutboxRelay } from './outbox-relay.js';
export { LostTaskSweep } from './lost-task-sweep.js';
export { RunBatches, BATCH_ACTIONS, MAX_BATCH_RUNS, type CreateRunBatchInput } from './run-batches.js';
export { RunRetention, RETENTION_PASS_MS, RETENTION_ROOTS_PER_BATCH, RETENTION_RUNS_PER_BATCH, type RetentionPass } from './run-retention.js';
export { ScheduleFires, timingOf, BACKFILL_STEP, type FireOutcome, type FireSource } from './schedule-fires.js';
export { toWeftError } from './error-mapping.js';
export { summarizeAction } from './history.js';
export { DagCache } from './dag-cache.js';
export * from './storable.js';
export * from './signal-buffer.js';
