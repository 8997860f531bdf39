import { describe, expect, it } from '@jest/globals';
import { ConnectionLimits, type Admitted } from './connection-limits.js';

/** Admits and binds one socket from `address` under (key, tenant); answers what bindKey answered and its release. */
function connect(limits: ConnectionLimits, key: string, tenant: string, address = '127.0.0.1') {
  const socket = {};
  const admitted = limits.admit(address) as Admitted;
  admitted.attach(socket);
  return { bound: limits.bindKey(socket, key, tenant), release: admitted.release };
}

describe('graphql-ws connections per tenant', () => {
  it('counts every key of a tenant together, refuses one more naming the cap and its setting, and releases on close', () => {
    const limits = new ConnectionLimits(10, 2, 10, 3);
    const held = [connect(limits, 'k1', 'a'), connect(limits, 'k1', 'a'), connect(limits, 'k2', 'a')];
    expect(held.map((c) => c.bound)).toEqual([true, true, true]);
    const over = connect(limits, 'k3', 'a');
    expect(over.bound).toEqual({
      refused: 'TOO_MANY_TENANT_CONNECTIONS: this tenant holds its most graphql-ws connections (3, WEFT_WS_MAX_CONNECTIONS_PER_TENANT)',
    });
    over.release();
    // The key cap is checked first, and neither refusal counts anything.
    expect(connect(limits, 'k1', 'a').bound).toEqual({ refused: limits.tooManyForKeyReason() });
    expect(connect(limits, 'k9', 'b').bound).toBe(true);
    expect(limits.ofTenant('a')).toBe(3);
    held[0]!.release();
    held[0]!.release(); // idempotent
    expect(limits.ofTenant('a')).toBe(2);
    expect(connect(limits, 'k3', 'a').bound).toBe(true);
  });

  it('keeps its close reasons within the 123 bytes a close frame allows at the largest caps', () => {
    const limits = new ConnectionLimits(1_000_000, 1_000_000, 1_000_000, 999_999);
    for (const reason of [limits.tooManyReason(), limits.tooManyPendingReason(), limits.tooManyForKeyReason(), limits.tooManyForTenantReason()]) {
      expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
    }
  });
});
