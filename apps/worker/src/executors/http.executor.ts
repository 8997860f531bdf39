import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, request } from 'undici';
import type { Dispatcher } from 'undici';
import { ExecutionError } from './executor.js';
import type { ExecutionContext, TaskExecutor } from './executor.js';

export interface HttpExecutorOptions {
  /** Allow loopback, private, link-local and other non-public addresses (WEFT_HTTP_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /**
   * Host names or IP literals exempt from the address check, compared with the URL's host
   * (case-insensitive). `*.example.com` matches any subdomain of example.com. The
   * exemption is per host: a redirect to another host is checked again.
   */
  allowHosts?: string[];
  /** Largest response body read, in bytes (default 10 MiB); a larger one fails the attempt. */
  maxResponseBytes?: number;
}

type AcceptRange = readonly [number, number];

interface HttpSpec {
  url: URL;
  method: string;
  headers: Record<string, string | string[]>;
  body: string | undefined;
  timeoutMs: number;
  accept: AcceptRange[];
  full: boolean;
}

const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const DEFAULT_TIMEOUT_SECONDS = 30;
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const EXCERPT_CHARS = 300;

/**
 * Executes `HTTP` tasks (DESIGN §2).
 *
 * Input, the resolved spec: `{url, method = 'GET', headers?, body?, timeout_seconds? = 30,
 * accept_status?, response? = 'body'}`. `body` is sent as is when a string, otherwise as
 * JSON with `content-type: application/json` unless the headers set one. `accept_status`
 * lists the accepted statuses (numbers, `"404"`, `"2xx"`, `"200-299"`) and replaces the
 * default 2xx.
 *
 * Output: the response body, parsed when it is JSON (JSON content type, or text that
 * parses), else the decoded text; `null` for an empty body. `response: 'full'` gives
 * `{status, headers, body}` (headers lowercased, repeated ones as arrays).
 *
 * Redirects (301/302/303/307/308) are followed up to 5 times; 303, and 301/302 after a
 * POST, become a GET without body; credentials headers are dropped across origins.
 *
 * Address guard: unless `allowPrivate`, or the host is in `allowHosts`, every connection
 * (first request and each redirect hop) is refused when the IP literal, or any address the
 * name resolves to, is not public unicast — loopback, RFC 1918, unique local, link-local
 * (incl. 169.254.169.254), unspecified, CGNAT, multicast, broadcast, reserved, and IPv4
 * embedded in IPv6 judged by the embedded address. The check runs inside the agent's
 * connector on the very lookup the socket connects with (so DNS rebinding between a check
 * and the connect is impossible), and again on the connected socket's remote address.
 *
 * Errors (`ExecutionError`): a malformed spec, an unsupported scheme, a refused address
 * are not retryable; a status not accepted (message: method, url, status, body excerpt),
 * a timeout, a network error, too many redirects, a body over the limit are retryable.
 */
export class HttpExecutor implements TaskExecutor {
  private readonly agent: Agent;
  private readonly maxResponseBytes: number;
  private readonly exactHosts: Set<string>;
  private readonly hostSuffixes: string[];

  constructor(private readonly options: HttpExecutorOptions) {
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const hosts = (options.allowHosts ?? []).map(normalizeHost).filter((h) => h !== '');
    this.exactHosts = new Set(hosts.filter((h) => !h.startsWith('*.')));
    this.hostSuffixes = hosts.filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
    this.agent = new Agent({
      connect: this.guardedConnector(),
      // The per-request deadline (timeout_seconds) bounds headers and body instead.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  async execute(input: unknown, ctx: ExecutionContext): Promise<unknown> {
    const spec = parseSpec(input);
    const label = `HTTP ${spec.method} ${displayUrl(spec.url)}`;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, spec.timeoutMs);
    const onCancel = (): void => controller.abort();
    ctx.signal?.addEventListener('abort', onCancel, { once: true });
    if (ctx.signal?.aborted) controller.abort();
    try {
      return await this.send(spec, controller.signal);
    } catch (err) {
      if (timedOut) {
        throw new ExecutionError(`${label} timed out after ${spec.timeoutMs / 1000}s`);
      }
      if (ctx.signal?.aborted) throw new ExecutionError(`${label} was cancelled`);
      if (err instanceof ExecutionError) throw err;
      if (isUndiciError(err, 'UND_ERR_INVALID_ARG')) {
        throw new ExecutionError(`${label}: invalid request: ${describeError(err)}`, false);
      }
      throw new ExecutionError(`${label} failed: ${describeError(err)}`);
    } finally {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onCancel);
    }
  }

  /** Closes pooled connections; call on shutdown. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private async send(spec: HttpSpec, signal: AbortSignal): Promise<unknown> {
    let url = spec.url;
    let method = spec.method;
    let body = spec.body;
    let headers = spec.headers;
    for (let hop = 0; ; hop++) {
      const res = await request(url, { method, headers, body, signal, dispatcher: this.agent });
      const location = firstHeader(res.headers.location);
      if (REDIRECT_STATUSES.has(res.statusCode) && location !== undefined) {
        await res.body.dump();
        if (hop === MAX_REDIRECTS) {
          throw new ExecutionError(
            `HTTP ${spec.method} ${displayUrl(spec.url)}: more than ${MAX_REDIRECTS} redirects`,
          );
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new ExecutionError(`HTTP ${method} ${displayUrl(url)} redirected to an invalid location`);
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw new ExecutionError(
            `HTTP ${method} ${displayUrl(url)} redirected to unsupported scheme ${next.protocol}`,
            false,
          );
        }
        const toGet =
          (res.statusCode === 303 && method !== 'HEAD') ||
          ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST');
        headers = redirectHeaders(headers, toGet, next.origin !== url.origin);
        if (toGet) {
          method = 'GET';
          body = undefined;
        }
        url = next;
        continue;
      }

      const raw = await this.readBody(res, method, url);
      const accepted = spec.accept.some(([lo, hi]) => res.statusCode >= lo && res.statusCode <= hi);
      const contentType = firstHeader(res.headers['content-type']) ?? '';
      if (!accepted) {
        const excerpt = excerptOf(decodeText(raw, contentType));
        throw new ExecutionError(
          `HTTP ${method} ${displayUrl(url)} returned status ${res.statusCode}` +
            (excerpt ? `: ${excerpt}` : ''),
        );
      }
      const parsed = parseBody(raw, contentType);
      if (!spec.full) return parsed;
      return { status: res.statusCode, headers: { ...res.headers }, body: parsed };
    }
  }

  private async readBody(res: Dispatcher.ResponseData, method: string, url: URL): Promise<Buffer> {
    const limit = this.maxResponseBytes;
    const tooLarge = (): ExecutionError =>
      new ExecutionError(`HTTP ${method} ${displayUrl(url)}: response body exceeds ${limit} bytes (OUTPUT_TOO_LARGE)`);
    const declared = Number(firstHeader(res.headers['content-length']));
    if (Number.isFinite(declared) && declared > limit) {
      res.body.destroy();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > limit) {
        res.body.destroy();
        throw tooLarge();
      }
      chunks.push(buf);
    }
    return Buffer.concat(chunks, size);
  }

  private isHostAllowed(hostname: string): boolean {
    if (this.options.allowPrivate) return true;
    const host = normalizeHost(hostname);
    return this.exactHosts.has(host) || this.hostSuffixes.some((suffix) => host.endsWith(suffix));
  }

  /**
   * A connector that checks addresses at connect time: IP literals before connecting,
   * names through a lookup that refuses non-public answers (net.connect skips the lookup
   * for literals), and finally the socket's remote address.
   */
  private guardedConnector(): buildConnector.connector {
    const lookup: LookupFunction = (hostname, opts, callback) => {
      dnsLookup(hostname, { ...opts, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return callback(err, '');
        if (!this.isHostAllowed(hostname)) {
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
      const allowed = this.isHostAllowed(host);
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

function refused(host: string, address: string, why: string): ExecutionError {
  const target = host === address ? address : `${host} (${address})`;
  return new ExecutionError(
    `refused to connect to ${target}: ${why}; the worker allows only public addresses ` +
      `(WEFT_HTTP_ALLOW_PRIVATE=1 or WEFT_HTTP_ALLOW_HOSTS lift this)`,
    false,
  );
}

function parseSpec(input: unknown): HttpSpec {
  if (!isRecord(input)) throw invalid('spec must be an object');
  const { url: rawUrl, method = 'GET', headers: rawHeaders, body: rawBody } = input;
  if (typeof rawUrl !== 'string' || rawUrl.trim() === '') throw invalid('spec.url is required');
  let url: URL;
  try {
    url = new URL(rawUrl.trim());
  } catch {
    throw invalid(`spec.url is not a valid URL: ${rawUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`spec.url scheme ${url.protocol} is not supported (http: and https: only)`);
  }
  if (typeof method !== 'string' || !/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*$/.test(method)) {
    throw invalid(`spec.method is not a valid HTTP method: ${String(method)}`);
  }

  const headers: Record<string, string | string[]> = {};
  if (rawHeaders !== undefined && rawHeaders !== null) {
    if (!isRecord(rawHeaders)) throw invalid('spec.headers must be an object');
    for (const [name, value] of Object.entries(rawHeaders)) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value) && value.every(isScalar)) headers[name] = value.map(String);
      else if (isScalar(value)) headers[name] = String(value);
      else throw invalid(`spec.headers.${name} must be a string`);
    }
  }

  let body: string | undefined;
  if (typeof rawBody === 'string') body = rawBody;
  else if (rawBody !== undefined && rawBody !== null) {
    body = JSON.stringify(rawBody);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
  }

  const timeout = input.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS;
  const seconds = typeof timeout === 'string' && timeout.trim() !== '' ? Number(timeout) : timeout;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    throw invalid(`spec.timeout_seconds must be a positive number of seconds`);
  }

  const response = input.response ?? 'body';
  if (response !== 'body' && response !== 'full') {
    throw invalid(`spec.response must be 'body' or 'full'`);
  }

  return {
    url,
    method: method.toUpperCase(),
    headers,
    body,
    timeoutMs: Math.round(seconds * 1000),
    accept: parseAcceptStatus(input.accept_status),
    full: response === 'full',
  };
}

function parseAcceptStatus(value: unknown): AcceptRange[] {
  if (value === undefined || value === null) return [[200, 299]];
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw invalid('spec.accept_status must not be empty');
  return list.map((entry): AcceptRange => {
    const text = String(entry).trim().toLowerCase();
    let m: RegExpMatchArray | null;
    if ((typeof entry === 'number' || typeof entry === 'string') && /^\d{3}$/.test(text)) {
      return [Number(text), Number(text)];
    }
    if (typeof entry === 'string' && (m = /^([1-5])xx$/.exec(text))) {
      return [Number(m[1]) * 100, Number(m[1]) * 100 + 99];
    }
    if (typeof entry === 'string' && (m = /^(\d{3})\s*-\s*(\d{3})$/.exec(text))) {
      return [Number(m[1]), Number(m[2])];
    }
    throw invalid(`spec.accept_status entry ${JSON.stringify(entry)} is not a status, "2xx" or "200-299"`);
  });
}

/** Headers for the next hop: never `host`; no content headers when the body is dropped; no credentials across origins. */
function redirectHeaders(
  headers: Record<string, string | string[]>,
  dropContent: boolean,
  crossOrigin: boolean,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'host') continue;
    if (dropContent && lower.startsWith('content-')) continue;
    if (crossOrigin && (lower === 'authorization' || lower === 'cookie' || lower === 'proxy-authorization')) {
      continue;
    }
    out[name] = value;
  }
  return out;
}

function parseBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return null;
  const text = decodeText(raw, contentType);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function decodeText(raw: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(raw);
    } catch {
      // Unknown charset label: fall back to UTF-8.
    }
  }
  return raw.toString('utf8');
}

function excerptOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

/** The URL without user info, for messages. */
function displayUrl(url: URL): string {
  if (!url.username && !url.password) return url.href;
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describeError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.map(describeError).join('; ');
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

function isUndiciError(err: unknown, code: string): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === code;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function invalid(message: string): ExecutionError {
  return new ExecutionError(`invalid HTTP spec: ${message}`, false);
}
