import type { RunEntity } from '@weft/persistence';
import type {
  CancelRunInput,
  FireTimerInput,
  PauseRunInput,
  ReportCompletedInput,
  ReportFailedInput,
  ReportResult,
  RetryRunInput,
  SendSignalInput,
  StartRunInput,
} from './inputs.js';
import type { RunReports } from './run-reports.js';
import type { UserCommands } from './user-commands.js';

/**
 * The commands a run takes — a user's start, signal, cancel and retry; a worker's reports; the
 * scheduler's timers. The entry point of apps: each command is handed to the code that checks it
 * and applies it as an event ({@link UserCommands}, {@link RunReports}).
 *
 * Values from outside are checked before they are stored: a worker output PostgreSQL cannot hold
 * (NUL character or lone surrogate in a string or key, too deep, over `maxOutputBytes`) fails the
 * attempt instead; a worker's error text is sanitized and cut; user input that cannot be stored
 * is refused with BAD_USER_INPUT naming the field and JSON path.
 */
export class RunCommands {
  constructor(
    private readonly users: UserCommands,
    private readonly reports: RunReports,
  ) {}

  /**
   * Creates a run (UUIDv7 id, status RUNNING) of `workflowId` at `version` (default: the
   * workflow's pinned default version, else the latest) and applies RunStarted in the same
   * transaction; a deprecated version is refused, explicit or default. With an `idempotencyKey`
   * already used by the tenant, returns that run with `created: false` whatever the other fields
   * say — even if its version was deprecated since — also when duplicates race (the unique index
   * decides the winner).
   * @throws WeftError NOT_FOUND for an unknown workflow or version; BAD_USER_INPUT when the
   * version is deprecated, when the machine rejects the start (unknown start node…), when the
   * input, config, idempotency key or start node cannot be stored (NUL character, lone
   * surrogate, too large — the message names the field and JSON path) or when the database
   * refuses a value the run would store; TRANSIENT.
   *
   * `run` is the new run's row as committed when the start left it RUNNING or QUEUED (see
   * `CreatedIn.row` in run-starts.ts), so the caller need not read it back; absent for a run that ended at
   * its start and for a run the idempotency key already named.
   */
  startRun(tenantId: string, input: StartRunInput): Promise<{ runId: string; created: boolean; run?: RunEntity }> {
    return this.users.startRun(tenantId, input);
  }

  /**
   * A worker's NodeCompleted. Stale or duplicate reports (another attempt, a finished task) and
   * reports for unknown runs are not errors: they return `{ignored}` (and, for a known run, leave
   * a history row; a report whose attempt is not a valid attempt number leaves none).
   *
   * An output the database cannot hold is not stored: the report becomes a NodeFailed of the same
   * attempt (so the node's retry policy applies) with the reason — `output is not storable: NUL
   * character at $.s`, `output too large: 2.3 MiB > 1 MiB (OUTPUT_TOO_LARGE)`
   * (`maxOutputBytes`). Should the database still refuse a value this event would write (e.g. a
   * downstream input a template computed), the event is applied once more as such a NodeFailed.
   *
   * Fencing: a report carrying a `leaseToken` for the task's current, still active attempt is
   * ignored when the token is not the task's current `lease_token` — the attempt was
   * re-dispatched (lease sweep, Bull's stalled-job redelivery) and claimed by another execution,
   * or revoked by the sweep. It is recorded in the history with `ignored` = `stale lease: attempt
   * N of node X was re-dispatched; this execution's lease was superseded` (N 0-based).
   * @throws WeftError TRANSIENT; the database's error if even that NodeFailed cannot be stored.
   */
  reportCompleted(tenantId: string, r: ReportCompletedInput): Promise<ReportResult> {
    return this.reports.reportCompleted(tenantId, r);
  }

  /**
   * A worker's NodeFailed; see {@link reportCompleted} for ignored reports. The
   * error text is stored sanitized: NUL characters and lone surrogates become U+FFFD, and text
   * beyond 8 KiB is cut.
   */
  reportFailed(tenantId: string, r: ReportFailedInput): Promise<ReportResult> {
    return this.reports.reportFailed(tenantId, r);
  }

  /**
   * TimerFired for a WAITING task. A timer the machine ignores (task no longer waiting, run
   * finished) has its `wake_at` cleared so it is never claimed again. When the database refuses a
   * value the event would write (a WAIT's successor input computed by a template), the waiting
   * task and the run fail with the reason instead, so the timer never fires again.
   */
  fireTimer(tenantId: string, t: FireTimerInput): Promise<ReportResult> {
    return this.reports.fireTimer(tenantId, t);
  }

  /**
   * Delivers a signal to the oldest node waiting for `name`, or buffers it (`delivered: false`)
   * unless the run's buffer is full (`maxBufferedSignals`, `maxBufferedSignalBytes`). A rejected
   * signal writes nothing.
   * @throws WeftError NOT_FOUND (unknown run), BAD_USER_INPUT (no name; a name or payload that
   * cannot be stored — the message names the field and JSON path; a payload over
   * `maxInputBytes`), CONFLICT (run finished; a signal to buffer beyond the run's caps, naming
   * the run, the cap and the buffered count and bytes), TRANSIENT.
   */
  sendSignal(tenantId: string, s: SendSignalInput): Promise<{ delivered: boolean }> {
    return this.users.sendSignal(tenantId, s);
  }

  /**
   * Cancels the run: every active task becomes CANCELLED, the run CANCELLED. A rejected cancel
   * writes nothing.
   * @throws WeftError NOT_FOUND, BAD_USER_INPUT (a reason that cannot be stored or is longer than
   * 8 KiB), CONFLICT (run already finished), TRANSIENT.
   */
  cancelRun(tenantId: string, c: CancelRunInput): Promise<void> {
    return this.users.cancelRun(tenantId, c);
  }

  /**
   * Pauses the run (and its active child runs, and theirs): it is PAUSED with `reason` (default
   * `paused`) as its pause reason until {@link resumeRun}. Attempts already with a worker finish
   * and are recorded, timers fire and signals are delivered, but nothing of it is dispatched
   * (its ready tasks wait QUEUED, wait reason RUN_PAUSED; an attempt admitted but not claimed yet
   * goes back to that wait) and no child run of it starts. A paused run does not end on its own:
   * it ends after its resume, or at once by {@link cancelRun}. Repeated, it changes nothing
   * (`ignored` says so). A rejected pause writes nothing.
   * @throws WeftError NOT_FOUND, BAD_USER_INPUT (a reason that cannot be stored or is longer than
   * 8 KiB), CONFLICT (run finished), TRANSIENT. A run QUEUED for a slot of its concurrency key
   * pauses too: no slot starts it until its resume, when it is QUEUED again.
   */
  pauseRun(tenantId: string, p: PauseRunInput): Promise<{ ignored?: string }> {
    return this.users.pauseRun(tenantId, p);
  }

  /**
   * Resumes a paused run (and its paused child runs): it is RUNNING again, what waited is
   * dispatched in flow control's order (an attempt still in its retry backoff when it is due),
   * a node whose attempts ran out (`on_exhausted: pause`) gets its `max_attempts` again (attempt
   * numbers go on), and the child runs its pause held start. On a running run it changes nothing
   * (`ignored` says so).
   * @throws WeftError NOT_FOUND, BAD_USER_INPUT (reason), CONFLICT (run finished), TRANSIENT.
   */
  resumeRun(tenantId: string, p: PauseRunInput): Promise<{ ignored?: string }> {
    return this.users.resumeRun(tenantId, p);
  }

  /**
   * Restarts the run from `fromNodeId` (that node and its descendants are reset) on `version`
   * (default the run's), optionally with new input/config. With `failedIterationsOnly`, the
   * `for_each` node `fromNodeId` keeps its completed iterations and runs only its failed, skipped
   * and cancelled ones again with their stored inputs; its descendants are reset. A rejected retry writes nothing.
   *
   * A child run (started by a SUBWORKFLOW node) is never retried on its own: its parent's task
   * already failed with the child's failure and would stay FAILED while the child succeeded.
   * Retrying the parent from that node starts a new child instead.
   * @throws WeftError NOT_FOUND (run or version), BAD_USER_INPUT (unknown node; with
   * `failedIterationsOnly`, a node without for_each or without an iteration to run again; input or config
   * that cannot be stored; `version` is another, deprecated version), CONFLICT (run paused; tasks still
   * active; a child run, naming its parent run and the parent's node to retry; a run of a
   * concurrency key that is still QUEUED, or that ended while its key has no free slot — a retry
   * never cancels nor waits for another run), TRANSIENT.
   */
  retryRun(tenantId: string, r: RetryRunInput): Promise<void> {
    return this.users.retryRun(tenantId, r);
  }
}
