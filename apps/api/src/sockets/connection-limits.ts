/**
 * Close code of a graphql-ws connection refused because the API holds its most connections in
 * all: 1013 Try Again Later (RFC 6455 registry: a temporary condition of the server), which
 * graphql-ws clients retry with backoff.
 */
export const CLOSE_TOO_MANY_CONNECTIONS = 1013;
/**
 * Close code of a graphql-ws connection refused, once authenticated, because its API key holds
 * its most connections: 4029, in the private range (4000-4999) outside graphql-ws's own 44xx
 * codes, after HTTP's 429. graphql-ws clients retry it with backoff, so a client whose other
 * connections close gets in again.
 */
export const CLOSE_TOO_MANY_KEY_CONNECTIONS = 4029;

/** One counted connection: {@link ConnectionLimits.admit}'s answer. */
interface Admission {
  /** The key it was counted under once authenticated. */
  keyId?: string;
  released: boolean;
}

/**
 * The graphql-ws connections one API process holds, in all and per API key, against the caps
 * `maxConnections` and `maxPerKey`. Every socket is counted from its upgrade (authenticated or
 * not) until its TCP connection closes, and under its key from authentication on; a refused
 * socket is never counted. Single-threaded: no locking needed.
 */
export class ConnectionLimits {
  private open = 0;
  private readonly byKey = new Map<string, number>();
  private readonly admissions = new WeakMap<object, Admission>();

  constructor(
    readonly maxConnections: number,
    readonly maxPerKey: number,
  ) {}

  /** Open connections counted now, in all. */
  get connections(): number {
    return this.open;
  }

  /**
   * Counts a new connection, or returns undefined when `maxConnections` are open. The answer's
   * `release` (idempotent) must run when the connection closes, however it closes.
   */
  admit(): { release: () => void; attach: (socket: object) => void } | undefined {
    if (this.open >= this.maxConnections) return undefined;
    this.open++;
    const admission: Admission = { released: false };
    return {
      release: () => this.release(admission),
      attach: (socket) => this.admissions.set(socket, admission),
    };
  }

  /**
   * Counts the connection of `socket` (attached at its admission) under `keyId`; false when the
   * key already holds `maxPerKey` connections, or the socket was never admitted or has closed.
   * Counting the same socket under the same key again is a no-op that answers true.
   */
  bindKey(socket: object, keyId: string): boolean {
    const a = this.admissions.get(socket);
    if (!a || a.released) return false;
    if (a.keyId !== undefined) return a.keyId === keyId;
    const held = this.byKey.get(keyId) ?? 0;
    if (held >= this.maxPerKey) return false;
    this.byKey.set(keyId, held + 1);
    a.keyId = keyId;
    return true;
  }

  /** Close reason of a connection refused over {@link maxConnections} (at most 123 bytes, as RFC 6455 allows). */
  tooManyReason(): string {
    return `TOO_MANY_CONNECTIONS: the API holds its most graphql-ws connections (${this.maxConnections}); retry later`;
  }

  /** Close reason of a connection refused over {@link maxPerKey}. */
  tooManyForKeyReason(): string {
    return `TOO_MANY_KEY_CONNECTIONS: this API key holds its most graphql-ws connections (${this.maxPerKey})`;
  }

  private release(a: Admission): void {
    if (a.released) return;
    a.released = true;
    this.open--;
    if (a.keyId === undefined) return;
    const held = (this.byKey.get(a.keyId) ?? 1) - 1;
    if (held > 0) this.byKey.set(a.keyId, held);
    else this.byKey.delete(a.keyId);
  }
}
