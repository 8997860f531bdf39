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
}

/** The GraphQL RunFilter input. */
export interface RunFilterInput {
  status?: string;
  workflowId?: string;
  version?: number;
  createdAfter?: string;
  createdBefore?: string;
  scheduleId?: string;
}

export const FILTER_KEYS = ['status', 'workflowId', 'version', 'createdAfter', 'createdBefore', 'schedule'] as const;

/** The search param holding the cursor of the page shown (absent on the first page). */
export const CURSOR_PARAM = 'after';

export const NO_FILTERS: RunFilterParams = { status: '', workflowId: '', version: '', createdAfter: '', createdBefore: '', schedule: '' };

export function readFilters(params: URLSearchParams): RunFilterParams {
  const out = { ...NO_FILTERS };
  for (const key of FILTER_KEYS) out[key] = params.get(key)?.trim() ?? '';
  return out;
}

/**
 * The search params for `filters` on their first page: every other param is kept, empty
 * filters are dropped and so is the cursor (a filter change starts over from the newest run).
 */
export function writeFilters(current: URLSearchParams, filters: RunFilterParams): URLSearchParams {
  const next = new URLSearchParams(current);
  next.delete(CURSOR_PARAM);
  for (const key of FILTER_KEYS) {
    const value = filters[key].trim();
    if (value) next.set(key, value);
    else next.delete(key);
  }
  return next;
}

/** The filter for the API, or the first reason the params are not one (shown instead of asking). */
export function toFilterInput(filters: RunFilterParams): { filter: RunFilterInput; problem: null } | { filter: null; problem: string } {
  const filter: RunFilterInput = {};
  if (filters.status) {
    if (!(RUN_STATUSES as readonly string[]).includes(filters.status)) return { filter: null, problem: `Unknown status "${filters.status}".` };
    filter.status = filters.status;
  }
  if (filters.workflowId) filter.workflowId = filters.workflowId;
  if (filters.schedule) filter.scheduleId = filters.schedule;
  if (filters.version) {
    const version = Number(filters.version);
    if (!/^\d+$/.test(filters.version) || !Number.isSafeInteger(version) || version < 1) {
      return { filter: null, problem: `Version must be a whole number from 1, not "${filters.version}".` };
    }
    filter.version = version;
  }
  for (const key of ['createdAfter', 'createdBefore'] as const) {
    if (!filters[key]) continue;
    if (Number.isNaN(Date.parse(filters[key])))
      return { filter: null, problem: `${key === 'createdAfter' ? 'Created after' : 'Created before'} is not a date: "${filters[key]}".` };
    filter[key] = new Date(filters[key]).toISOString();
  }
  if (filter.createdAfter && filter.createdBefore && filter.createdAfter >= filter.createdBefore) {
    return { filter: null, problem: 'Created after must be earlier than created before.' };
  }
  return { filter, problem: null };
}

/** True when any filter is set. */
export function hasFilters(filters: RunFilterParams): boolean {
  return FILTER_KEYS.some((key) => filters[key] !== '');
}
