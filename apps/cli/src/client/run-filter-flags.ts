import { Option, type Command } from 'commander';
import { RUN_STATUSES, runStatus, since } from './arguments.js';
import type { RunFilter, RunStatus } from './generated/graphql.js';
import { label } from './label-arguments.js';

/** The flags {@link withRunFilter} adds, as commander parses them. */
export interface RunFilterFlags {
  status?: RunStatus;
  workflow?: string;
  schedule?: string;
  since?: ReturnType<typeof since>;
  label?: Record<string, string>;
  failedNode?: string;
  error?: string;
  finishedAfter?: ReturnType<typeof since>;
  finishedBefore?: ReturnType<typeof since>;
}

/**
 * Adds the run filter flags `runs` and `batch` share to `cmd`: `--status`, `--workflow`,
 * `--schedule`, `--since`, `--label` (repeatable), `--failed-node`, `--error`,
 * `--finished-after` and `--finished-before`. Malformed values are usage errors.
 */
export function withRunFilter(cmd: Command): Command {
  return cmd
    .addOption(new Option('--status <status>', 'only runs with this status').choices(RUN_STATUSES).argParser(runStatus))
    .option('--workflow <id>', 'only runs of this workflow')
    .option('--schedule <id>', 'only runs this schedule started')
    .option('--since <when>', 'only runs created since: a length of time back from now (30m, 1h, 2h30m, 7d) or an RFC 3339 time', since)
    .option('--label <key=value>', `only runs carrying this label; repeat for runs carrying all of them`, label)
    .option('--failed-node <nodeId>', 'only runs with a FAILED task of this node')
    .option('--error <text>', 'only runs whose error contains this text (ignoring case)')
    .option('--finished-after <when>', 'only runs that finished at or after: a length of time back from now (1h, 7d) or an RFC 3339 time', since)
    .option('--finished-before <when>', 'only runs that finished before: a length of time back from now (1h, 7d) or an RFC 3339 time', since);
}

/** The instant a {@link since} option names, as RFC 3339: as written, or its length of time back from `now` (ms since the epoch). */
function instantOf(when: ReturnType<typeof since> | undefined, now: number): string | undefined {
  return when && ('at' in when ? when.at : new Date(now - when.agoMs).toISOString());
}

/**
 * The API's RunFilter for the flags of {@link withRunFilter}, lengths of time counted back from
 * `now` (ms since the epoch); a flag not given is left out (undefined).
 */
export function runFilterOf(o: RunFilterFlags, now: number): RunFilter {
  return {
    status: o.status,
    workflowId: o.workflow,
    scheduleId: o.schedule,
    createdAfter: instantOf(o.since, now),
    labels: o.label,
    failedNodeId: o.failedNode,
    errorContains: o.error,
    finishedAfter: instantOf(o.finishedAfter, now),
    finishedBefore: instantOf(o.finishedBefore, now),
  };
}

/** True when `filter` has no condition: it would match every run. */
export function isEmptyFilter(filter: RunFilter): boolean {
  return Object.values(filter).every((v) => v === undefined || v === null);
}
