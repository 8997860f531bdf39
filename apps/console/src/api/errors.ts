import type { CombinedError } from '@urql/core';

/**
 * The API's own words for a failed operation: each GraphQL error's message (with its code, e.g.
 * `NOT_FOUND`, and the problems a refused definition lists), or the network failure. Shown as
 * is, so a refused action says exactly what the API said.
 */
export function errorText(error: CombinedError): string {
  if (error.graphQLErrors.length) {
    return error.graphQLErrors
      .map((e) => {
        const code = typeof e.extensions?.code === 'string' ? e.extensions.code : undefined;
        const listed = Array.isArray(e.extensions?.problems) ? (e.extensions.problems as Problem[]) : [];
        // A problem that repeats the message only adds where it is: `(at id)` on the message's line.
        const repeats = listed.filter((p) => p.message === e.message);
        const where = repeats.map((p) => [p.path, p.nodeId && `node ${p.nodeId}`].filter(Boolean).join(', ')).filter(Boolean);
        const problems = listed.filter((p) => p.message !== e.message);
        const detail =
          (where.length ? ` (at ${where.join('; ')})` : '') +
          problems.map((p) => `\n  ${[p.path, p.nodeId && `node ${p.nodeId}`].filter(Boolean).join(', ')}: ${p.message}`).join('');
        return `${code ? `${code}: ` : ''}${e.message}${detail}`;
      })
      .join('\n');
  }
  return error.networkError ? `Network error: ${error.networkError.message}` : error.message;
}

interface Problem {
  message: string;
  path?: string;
  nodeId?: string;
}
