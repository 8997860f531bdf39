import type { CombinedError } from '@urql/core';

/** One problem the API named: where (`path`, `nodeId`) when it said, and what. */
export interface ApiProblem {
  message: string;
  path?: string;
  nodeId?: string;
}

/** A failed operation's problems sorted into the form's fields (`F`), and the rest. */
export interface PlacedProblems<F extends string> {
  /** Each GraphQL error's `CODE: message` (or the network failure), for the form as a whole. */
  summary: string[];
  /** The problems whose place is a field, by field, in the API's order. */
  fields: Partial<Record<F, ApiProblem[]>>;
  /** The problems no field holds (listed under the summary). */
  rest: ApiProblem[];
}

/**
 * Sorts the problems of `error` (each GraphQL error's `extensions.problems`, as the API's error
 * formatter lists them) into fields: `fieldOf` names the field of one problem, or null. A problem
 * that only repeats its error's message, with no path, is that error's summary and goes nowhere.
 */
export function placeProblems<F extends string>(error: CombinedError, fieldOf: (problem: ApiProblem) => F | null): PlacedProblems<F> {
  const placed: PlacedProblems<F> = { summary: [], fields: {}, rest: [] };
  if (!error.graphQLErrors.length) {
    placed.summary.push(error.networkError ? `Network error: ${error.networkError.message}` : error.message);
    return placed;
  }
  for (const e of error.graphQLErrors) {
    const code = typeof e.extensions?.code === 'string' ? e.extensions.code : undefined;
    placed.summary.push(`${code ? `${code}: ` : ''}${e.message}`);
    const listed = Array.isArray(e.extensions?.problems) ? (e.extensions.problems as unknown[]).filter(isProblem) : [];
    for (const raw of listed) {
      const problem: ApiProblem = { message: raw.message, ...(raw.path ? { path: raw.path } : {}), ...(raw.nodeId ? { nodeId: raw.nodeId } : {}) };
      if (!problem.path && !problem.nodeId && problem.message === e.message) continue;
      const field = fieldOf(problem);
      if (field === null) placed.rest.push(problem);
      else (placed.fields[field] ??= []).push(problem);
    }
  }
  return placed;
}

/**
 * A `fieldOf` for inputs whose problem paths start with the field's name, as the API's paths for
 * a mutation's `input` do: `input.order_id`, `input.$.order_id`, `config`, `version`.
 */
export function byFirstSegment<F extends string>(fields: readonly F[]): (problem: ApiProblem) => F | null {
  return (problem) => {
    const first = problem.path?.split(/[.[]/, 1)[0];
    return fields.find((f) => f === first) ?? null;
  };
}

/** The line and column of a problem whose path is a place in the text (`line 3, column 7`). */
export function textSpotOf(problem: ApiProblem): { line: number; column: number } | null {
  const m = /^line (\d+), column (\d+)$/.exec(problem.path ?? '');
  return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
}

function isProblem(p: unknown): p is { message: string; path?: string | null; nodeId?: string | null } {
  return typeof p === 'object' && p !== null && typeof (p as { message?: unknown }).message === 'string';
}
