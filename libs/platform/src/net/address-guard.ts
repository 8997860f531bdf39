import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

/**
 * The SSRF address guard shared by the worker's HTTP executor and the scheduler's webhook sender:
 * outgoing connections reach public unicast addresses only, unless the process allows private
 * ones (WEFT_HTTP_ALLOW_PRIVATE) or the host is exempt.
 */

/** Builds the error of a refused connection to `host` at `address`, refused for `why` (a kind of address). */
export type RefusalFactory = (host: string, address: string, why: string) => Error;

/**
 * A connection the address guard refused. `message` names the host and address; `reason` only
 * the kind of address (`a loopback address`).
 */
export class AddressRefusedError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'AddressRefusedError';
  }
}

/**
 * A connector that checks addresses at connect time: IP literals before connecting, names
 * through a lookup that refuses non-public answers (net.connect skips the lookup for literals),
 * and finally the socket's remote address. `isHostAllowed(host)` exempts a host (already
 * normalized) from the check. `refused` builds the error of a refusal (by default an
 * {@link AddressRefusedError} whose message names `process` as the one refusing).
 */
export function guardedConnector(isHostAllowed: (host: string) => boolean, refused: RefusalFactory = refusal('this process')): buildConnector.connector {
  const lookup: LookupFunction = (hostname, opts, callback) => {
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '');
      if (!isHostAllowed(normalizeHost(hostname))) {
        for (const { address } of addresses) {
          const why = addressRefusal(address);
          if (why) return callback(refused(hostname, address, why), '');
        }
      }
      if (opts.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(new Error(`no address for ${hostname}`), '');
      callback(null, first.address, first.family);
    });
  };
  const connect = buildConnector({ lookup });

  return (opts, callback) => {
    const host = normalizeHost(opts.hostname);
    const allowed = isHostAllowed(host);
    if (!allowed && isIP(host)) {
      const why = addressRefusal(host);
      if (why) return callback(refused(host, host, why), null);
    }
    connect(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('connect failed'), null);
      const remote = socket.remoteAddress;
      const why = allowed ? null : remote ? addressRefusal(remote) : 'unknown remote address';
      if (why) {
        socket.destroy();
        return callback(refused(host, remote ?? '?', why), null);
      }
      callback(null, socket);
    });
  };
}

/**
 * Why `address` (an IPv4 or IPv6 literal) must not be reached without permission, or
 * `null` when it is public unicast. IPv4 embedded in IPv6 (mapped, translated, NAT64,
 * 6to4, compatible) is judged by the embedded address.
 */
export function addressRefusal(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/%.*$/, ''));
  } catch {
    return 'not a valid IP address';
  }
  if (ip.kind() === 'ipv4') return describeRange((ip as ipaddr.IPv4).range(), ip.toString());
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  const bytes = v6.toByteArray();
  const embedded =
    range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052'
      ? bytes.slice(12, 16)
      : range === '6to4'
        ? bytes.slice(2, 6)
        : bytes.slice(0, 12).every((b) => b === 0) // ::a.b.c.d (deprecated IPv4-compatible)
          ? bytes.slice(12, 16)
          : null;
  if (embedded && range !== 'loopback' && range !== 'unspecified') {
    const v4 = new ipaddr.IPv4(embedded);
    const why = describeRange(v4.range(), v4.toString());
    return why ? `${why}, embedded in ${v6.toString()}` : null;
  }
  return describeRange(range, v6.toString());
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address (RFC 1918)',
  uniqueLocal: 'a private address (unique local, fc00::/7)',
  linkLocal: 'a link-local address',
  unspecified: 'an unspecified address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
};

function describeRange(range: string, address: string): string | null {
  if (range === 'unicast') return null;
  if (address === '169.254.169.254') return 'the cloud metadata address (link-local)';
  return RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
}

/**
 * The message of a refusal by `who` (`the worker`): `refused to connect to <host> (<address>):
 * <why>; <who> allows only public addresses (…)`.
 */
export function refusalMessage(who: string, host: string, address: string, why: string): string {
  const target = host === address ? address : `${host} (${address})`;
  return `refused to connect to ${target}: ${why}; ${who} allows only public addresses (WEFT_HTTP_ALLOW_PRIVATE=1 or WEFT_HTTP_ALLOW_HOSTS lift this)`;
}

/** The kind of address of a refusal's `why`, without the IPv6 address an IPv4 one was embedded in. */
export function refusalKind(why: string): string {
  return why.replace(/, embedded in .*$/, '');
}

/** The default {@link RefusalFactory}: an {@link AddressRefusedError} naming `who` as the one refusing. */
export function refusal(who: string): RefusalFactory {
  return (host, address, why) => new AddressRefusedError(refusalMessage(who, host, address, why), refusalKind(why));
}

/** A host name or IP literal as the guard compares it: trimmed, lowercased, without brackets or a final dot. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}
