import type { Principal } from './principal.js';

/** The GraphQL context of every operation, over HTTP and graphql-ws alike. */
export interface GqlContext {
  principal: Principal;
  /** The credentials as sent (`Bearer <key>`), to check the key again during a long operation. */
  authorization?: unknown;
  /** When the key was last found valid, ms since the epoch. */
  authenticatedAt?: number;
  /** The request's W3C `traceparent` header (HTTP only): a run started by it continues that trace. */
  traceparent?: string;
}

/** Reads the key from `Bearer <key>` (scheme case-insensitive); undefined when absent or malformed. */
export function bearerKey(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
