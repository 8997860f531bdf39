/**
 * Close code of a graphql-ws connection refused because the API holds its most connections in
 * all: 1013 Try Again Later (RFC 6455 registry: a temporary condition of the server), which
 * graphql-ws clients retry with backoff.
 */
export const CLOSE_TOO_MANY_CONNECTIONS = 1013;
/**
 * Close code of a graphql-ws connection refused, once authenticated, because its API key or its
 * tenant holds its most connections: 4029, in the private range (4000-4999) outside graphql-ws's
 * own 44xx codes, after HTTP's 429. graphql-ws clients retry it with backoff, so a client whose
 * other connections close gets in again.
 */
export const CLOSE_TOO_MANY_KEY_CONNECTIONS = 4029;

/** One counted connection: {@link ConnectionLimits.admit}'s answer. */
interface Admission {
  /** The remote address it is counted under until authenticated. */
  address: string;
  /** The key and the tenant it was counted under once authenticated; undefined while pending. */
  keyId?: string;
  tenantId?: string;
  released: boolean;
}

/** A connection {@link ConnectionLimits.admit} counted: `release` (idempotent) must run once it closes. */
export interface Admitted {
  release: () => void;
  attach: (socket: object) => void;
}

/** Why {@link ConnectionLimits.admit} refused a connection: its close reason. */
export interface Refused {
  refused: string;
}

/**
 * The graphql-ws connections one API process holds, in all, per remote address until they
 * authenticate, and per API key and per tenant once they did, against the caps
 * `maxConnections`, `maxPendingPerAddress`, `maxPerKey` and `maxPerTenant`. Every socket is
 * counted from its upgrade (authenticated or not) until its TCP connection closes, under its
 * address until its key is bound, and under its key and its key's tenant from then on; a refused
 * socket is never counted. The per-address cap keeps one address from filling `maxConnections`
 * with sockets that never authenticate; the per-tenant cap (below `maxConnections`) keeps one
 * tenant, however many keys it mints, from holding every connection.
 * Single-threaded: no locking needed.
 */
export class ConnectionLimits {
  private open = 0;
  private readonly byKey = new Map<string, number>();
  private readonly byTenant = new Map<string, number>();
  private readonly pendingByAddress = new Map<string, number>();
  private readonly admissions = new WeakMap<object, Admission>();

  constructor(
    readonly maxConnections: number,
    readonly maxPerKey: number,
    readonly maxPendingPerAddress: number,
    readonly maxPerTenant: number,
  ) {}

  /** Open connections counted now, in all. */
  get connections(): number {
    return this.open;
  }

  /**
   * Counts a new connection from `remoteAddress` (an IPv4-mapped IPv6 address counts as its IPv4
   * one), or refuses it, with its close reason, when `maxConnections` are open or the address
   * holds `maxPendingPerAddress` connections not yet authenticated.
   */
  admit(remoteAddress: string | undefined): Admitted | Refused {
    if (this.open >= this.maxConnections) return { refused: this.tooManyReason() };
    const address = addressKey(remoteAddress);
    const pending = this.pendingByAddress.get(address) ?? 0;
    if (pending >= this.maxPendingPerAddress) return { refused: this.tooManyPendingReason() };
    this.open++;
    this.pendingByAddress.set(address, pending + 1);
    const admission: Admission = { address, released: false };
    return {
      release: () => this.release(admission),
      attach: (socket) => this.admissions.set(socket, admission),
    };
  }

  /**
   * Counts the connection of `socket` (attached at its admission) under `keyId` and `tenantId`;
   * answers true, or the close reason when the key already holds `maxPerKey` connections or the
   * tenant `maxPerTenant` (then nothing is counted), or false when the socket was never admitted
   * or has closed. Counting the same socket under the same key again is a no-op that answers true.
   */
  bindKey(socket: object, keyId: string, tenantId: string): true | false | Refused {
    const a = this.admissions.get(socket);
    if (!a || a.released) return false;
    if (a.keyId !== undefined) return a.keyId === keyId;
    const held = this.byKey.get(keyId) ?? 0;
    if (held >= this.maxPerKey) return { refused: this.tooManyForKeyReason() };
    const ofTenant = this.byTenant.get(tenantId) ?? 0;
    if (ofTenant >= this.maxPerTenant) return { refused: this.tooManyForTenantReason() };
    this.byKey.set(keyId, held + 1);
    this.byTenant.set(tenantId, ofTenant + 1);
    a.keyId = keyId;
    a.tenantId = tenantId;
    this.unpend(a.address);
    return true;
  }

  /** Open connections the tenant holds now (authenticated ones). */
  ofTenant(tenantId: string): number {
    return this.byTenant.get(tenantId) ?? 0;
  }

  /** Close reason of a connection refused over {@link maxConnections} (at most 123 bytes, as RFC 6455 allows). */
  tooManyReason(): string {
    return `TOO_MANY_CONNECTIONS: the API holds its most graphql-ws connections (${this.maxConnections}); retry later`;
  }

  /** Close reason of a connection refused over {@link maxPendingPerAddress}. */
  tooManyPendingReason(): string {
    return `TOO_MANY_PENDING_CONNECTIONS: this address holds its most unauthenticated graphql-ws connections (${this.maxPendingPerAddress})`;
  }

  /** Close reason of a connection refused over {@link maxPerKey}. */
  tooManyForKeyReason(): string {
    return `TOO_MANY_KEY_CONNECTIONS: this API key holds its most graphql-ws connections (${this.maxPerKey})`;
  }

  /** Close reason of a connection refused over {@link maxPerTenant}. */
  tooManyForTenantReason(): string {
    return `TOO_MANY_TENANT_CONNECTIONS: this tenant holds its most graphql-ws connections (${this.maxPerTenant}, WEFT_WS_MAX_CONNECTIONS_PER_TENANT)`;
  }

  private release(a: Admission): void {
    if (a.released) return;
    a.released = true;
    this.open--;
    if (a.keyId === undefined) return this.unpend(a.address);
    decrement(this.byKey, a.keyId);
    decrement(this.byTenant, a.tenantId!);
  }

  private unpend(address: string): void {
    const pending = (this.pendingByAddress.get(address) ?? 1) - 1;
    if (pending > 0) this.pendingByAddress.set(address, pending);
    else this.pendingByAddress.delete(address);
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const held = (counts.get(key) ?? 1) - 1;
  if (held > 0) counts.set(key, held);
  else counts.delete(key);
}

/** `::ffff:127.0.0.1` → `127.0.0.1`: a dual-stack listener reports IPv4 peers in that form. */
function addressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return '';
  return remoteAddress.toLowerCase().startsWith('::ffff:') && remoteAddress.includes('.') ? remoteAddress.slice(7) : remoteAddress;
}
