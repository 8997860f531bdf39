import { RUN_STATUSES } from './types.js';

/** The runs list's filters as the URL keeps them (search params of /runs); '' is "any". */
export interface RunFilterParams {
  status: string;
  workflowId: string;
  version: string;
  /** ISO instants. */
  createdAfter: string;
  createdBefore: string;
  /** A schedule id (`?schedule=`): the runs it started. */
  schedule: string;
  /** A node id: runs with a FAILED task of it. */
  failedNodeId: string;
  /** Text the run's error contains (ignoring case). */
  errorContains: string;
  /** ISO instants; unfinished runs match neither. */
  finishedAfter: string;
  finishedBefore: string;
  /** Labels the runs must all carry, one `key=value` per line (`?label=key=value`, repeated). */
  labels: string;
}

/** The GraphQL RunFilter input. */
export interface RunFilterInput {
  status?: string;
  workflowId?: string;
  version?: number;
  createdAfter?: string;
  createdBefore?: string;
  scheduleId?: string;
  failedNodeId?: string;
  errorContains?: string;
  finishedAfter?: string;
  finishedBefore?: string;
  labels?: Record<string, string>;
}

/** The filters kept in one search param each, under their own name. */
export const FILTER_KEYS = [
  'status',
  'workflowId',
  'version',
  'createdAfter',
  'createdBefore',
  'schedule',
  'failedNodeId',
  'errorContains',
  'finishedAfter',
  'finishedBefore',
] as const;

/** The search param holding one label, `key=value`; repeated for more. */
export const LABEL_PARAM = 'label';

/** The search param holding the cursor of the page shown (absent on the first page). */
export const CURSOR_PARAM = 'after';

export const NO_FILTERS: RunFilterParams = {
  status: '',
  workflowId: '',
  version: '',
  createdAfter: '',
  createdBefore: '',
  schedule: '',
  failedNodeId: '',
  errorContains: '',
  finishedAfter: '',
  finishedBefore: '',
  labels: '',
};

/** The `key=value` lines of `text`, trimmed, empty ones dropped. */
function labelLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

export function readFilters(params: URLSearchParams): RunFilterParams {
  const out = { ...NO_FILTERS };
  for (const key of FILTER_KEYS) out[key] = params.get(key)?.trim() ?? '';
  out.labels = params
    .getAll(LABEL_PARAM)
    .flatMap((value) => labelLines(value))
    .join('\n');
  return out;
}

/**
 * The search params for `filters` on their first page: every other param is kept, empty
 * filters are dropped and so is the cursor (a filter change starts over from the newest run).
 * Each label line is a param of its own.
 */
export function writeFilters(current: URLSearchParams, filters: RunFilterParams): URLSearchParams {
  const next = new URLSearchParams(current);
  next.delete(CURSOR_PARAM);
  for (const key of FILTER_KEYS) {
    const value = filters[key].trim();
    if (value) next.set(key, value);
    else next.delete(key);
  }
  next.delete(LABEL_PARAM);
  for (const line of labelLines(filters.labels)) next.append(LABEL_PARAM, line);
  return next;
}

/** The label keys the API accepts (as in startRun). */
const LABEL_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The labels of `text` (one `key=value` per line, split at the first `=`, the line and the key
 * trimmed, the value kept as it stands after the `=`), or the first line that is not one. A key given twice
 * with different values can match no run, so it is refused too.
 */
export function parseLabels(text: string): { labels: Record<string, string>; problem: null } | { labels: null; problem: string } {
  const labels: Record<string, string> = {};
  for (const line of labelLines(text)) {
    const at = line.indexOf('=');
    if (at < 0) return { labels: null, problem: `Label "${line}" is not key=value.` };
    const key = line.slice(0, at).trim();
    const value = line.slice(at + 1);
    if (!LABEL_KEY.test(key)) return { labels: null, problem: `Label key "${key}" must be 1 to 64 characters of A-Z a-z 0-9 _ . -` };
    if (key in labels && labels[key] !== value) return { labels: null, problem: `Label ${key} is given twice, with different values.` };
    labels[key] = value;
  }
  return { labels, problem: null };
}

const DATE_NAMES = {
  createdAfter: 'Created after',
  createdBefore: 'Created before',
  finishedAfter: 'Finished after',
  finishedBefore: 'Finished before',
} as const;

/** The filter for the API, or the first reason the params are not one (shown instead of asking). */
export function toFilterInput(filters: RunFilterParams): { filter: RunFilterInput; problem: null } | { filter: null; problem: string } {
  const filter: RunFilterInput = {};
  if (filters.status) {
    if (!(RUN_STATUSES as readonly string[]).includes(filters.status)) return { filter: null, problem: `Unknown status "${filters.status}".` };
    filter.status = filters.status;
  }
  if (filters.workflowId) filter.workflowId = filters.workflowId;
  if (filters.schedule) filter.scheduleId = filters.schedule;
  if (filters.failedNodeId) filter.failedNodeId = filters.failedNodeId;
  if (filters.errorContains) filter.errorContains = filters.errorContains;
  if (filters.version) {
    const version = Number(filters.version);
    if (!/^\d+$/.test(filters.version) || !Number.isSafeInteger(version) || version < 1) {
      return { filter: null, problem: `Version must be a whole number from 1, not "${filters.version}".` };
    }
    filter.version = version;
  }
  for (const key of ['createdAfter', 'createdBefore', 'finishedAfter', 'finishedBefore'] as const) {
    if (!filters[key]) continue;
    if (Number.isNaN(Date.parse(filters[key]))) return { filter: null, problem: `${DATE_NAMES[key]} is not a date: "${filters[key]}".` };
    filter[key] = new Date(filters[key]).toISOString();
  }
  if (filter.createdAfter && filter.createdBefore && filter.createdAfter >= filter.createdBefore) {
    return { filter: null, problem: 'Created after must be earlier than created before.' };
  }
  if (filter.finishedAfter && filter.finishedBefore && filter.finishedAfter >= filter.finishedBefore) {
    return { filter: null, problem: 'Finished after must be earlier than finished before.' };
  }
  const labels = parseLabels(filters.labels);
  if (labels.problem !== null) return { filter: null, problem: labels.problem };
  if (Object.keys(labels.labels).length) filter.labels = labels.labels;
  return { filter, problem: null };
}

/** True when any filter is set. */
export function hasFilters(filters: RunFilterParams): boolean {
  return FILTER_KEYS.some((key) => filters[key] !== '') || labelLines(filters.labels).length > 0;
}
