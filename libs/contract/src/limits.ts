/**
 * The sizes the API enforces and its clients plan around: pages of lists (`first` arguments) and
 * counts. The API clamps or refuses past these; the CLI and the console read them from here
 * instead of repeating the numbers. Plain numbers, no imports: the console bundles this file.
 */

/** Default page size of `runs(first:)`. */
export const RUNS_PAGE_DEFAULT = 20;
/** Largest page of `runs(first:)`; larger requests are refused with BAD_USER_INPUT. */
export const RUNS_PAGE_MAX = 200;

/** Default page of `Run.tasks(first:)` and `Run.history(first:)`. */
export const RUN_ITEMS_PAGE_DEFAULT = 1000;
/** Largest page of `Run.tasks(first:)` and `Run.history(first:)`; larger requests are refused. */
export const RUN_ITEMS_PAGE_MAX = 1000;

/** Default page size of `concurrencyKeys(first:)`. */
export const CONCURRENCY_KEYS_PAGE_DEFAULT = 20;
/** Largest page of `concurrencyKeys(first:)`; larger requests are refused. */
export const CONCURRENCY_KEYS_PAGE_MAX = 200;
/** Most rate keys `rateLimits` returns (the first by key). */
export const RATE_LIMITS_MAX = 500;

/** Default page size of `schedules(first:)`. */
export const SCHEDULES_PAGE_DEFAULT = 50;
/** Largest page of `schedules(first:)`; larger requests are refused. */
export const SCHEDULES_PAGE_MAX = 200;
/** Most nominal fire times `Schedule.upcoming(count:)` lists. */
export const UPCOMING_MAX = 100;

/** Most labels a run (or a schedule, for the runs it starts) may carry. */
export const RUN_LABELS_MAX = 16;
/** Longest label key, in characters; keys are made of A-Z, a-z, 0-9, `_`, `.` and `-`. */
export const RUN_LABEL_KEY_MAX_CHARS = 64;
/** Longest label value, in characters (code points). */
export const RUN_LABEL_VALUE_MAX_CHARS = 256;
