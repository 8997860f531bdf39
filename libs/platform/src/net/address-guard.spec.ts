import { describe, expect, it } from '@jest/globals';
import { Agent, request } from 'undici';
import { AddressRefusedError, guardedConnector, refusal } from './address-guard.js';

/** POSTs to `url` through the guard (`allowed`: every host exempt); resolves the error, or null when a request went out. */
async function attempt(url: string, allowed: boolean): Promise<unknown> {
  const agent = new Agent({ connect: guardedConnector(() => allowed, refusal('the scheduler')) });
  try {
    await request(url, { method: 'POST', body: '{}', dispatcher: agent, signal: AbortSignal.timeout(2_000) });
    return null;
  } catch (err) {
    return err;
  } finally {
    await agent.close();
  }
}

/** Refusals are decided before any connection: the private addresses below are never sent a packet. */
describe('the shared address guard', () => {
  it.each([
    ['http://10.20.30.40:9/hook', 'a private address (RFC 1918)'],
    ['http://192.168.1.1:9/hook', 'a private address (RFC 1918)'],
    ['http://169.254.169.254/latest', 'the cloud metadata address (link-local)'],
    ['http://[fd00::1]:9/hook', 'a private address (unique local, fc00::/7)'],
  ])('refuses %s unless private addresses are allowed', async (url, why) => {
    const err = await attempt(url, false);
    expect(err).toBeInstanceOf(AddressRefusedError);
    expect((err as AddressRefusedError).reason).toBe(why);
    expect((err as Error).message).toContain('the scheduler allows only public addresses');
  });

  it('lets a loopback receiver through when allowed, and refuses it otherwise', async () => {
    const refused = await attempt('http://127.0.0.1:9/hook', false);
    expect((refused as AddressRefusedError).reason).toBe('a loopback address');
    // Allowed: the connection is attempted (port 9 on loopback refuses it: not an AddressRefusedError).
    const allowed = await attempt('http://127.0.0.1:9/hook', true);
    expect(allowed).not.toBeInstanceOf(AddressRefusedError);
  });
});
