import { nonRetryableMatch, type NonRetryableStatus } from '@weft/engine';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { AttemptLog } from './attempt-log.js';
import { ExecutionError } from './executor.js';
import type { ExecutionContext, TaskExecutor } from './executor.js';
import { guardedConnector, normalizeHost, RefusedAddressError } from './http-address-guard.js';
import { parseSpec, type HttpSpec } from './http-spec.js';
import { setLongTimeout } from './long-timer.js';

export { addressRefusal } from './http-address-guard.js';

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

const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const EXCERPT_CHARS = 300;

/** What a sensitive execution's messages show in place of its url. */
export const REDACTED_URL = '<redacted url>';

/**
 * How one execution's messages show what the tenant resolved: the url (without user info), a
 * response body excerpt and a cause's message; for a sensitive node none of them, only
 * `<redacted url>` and the cause's error code or class.
 */
interface Shown {
  url(url: URL): string;
  excerpt(text: string): string;
  cause(err: unknown): string;
}

const IN_FULL: Shown = { url: displayUrl, excerpt: excerptOf, cause: describeError };
const REDACTED: Shown = { url: () => REDACTED_URL, excerpt: () => '', cause: errorKind };

/**
 * Executes `HTTP` tasks.
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
 * are not retryable; a status not accepted (message: method, url, status, body excerpt) is
 * retryable unless the node's `retry.non_retryable` lists it (`ctx.nonRetryable`, see
 * {@link statusError}); a timeout, a network error, too many redirects, a body over the limit are
 * retryable. For a
 * sensitive node (`ctx.sensitive`) the messages name the method, the status and the error's
 * code or class, never the url, the headers or the body (`HTTP GET <redacted url> returned
 * status 500`).
 *
 * `timeout_seconds` may be up to 365 days, beyond what one Node timer holds ({@link setLongTimeout}).
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
      connect: guardedConnector((host) => this.isHostAllowed(host)),
      // The per-request deadline (timeout_seconds) bounds headers and body instead.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  async execute(input: unknown, ctx: ExecutionContext): Promise<unknown> {
    const shown = ctx.sensitive ? REDACTED : IN_FULL;
    const spec = parseSpec(input, ctx.sensitive);
    const label = `HTTP ${spec.method} ${shown.url(spec.url)}`;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setLongTimeout(() => {
      timedOut = true;
      controller.abort();
    }, spec.timeoutMs);
    const onCancel = (): void => controller.abort();
    ctx.signal?.addEventListener('abort', onCancel, { once: true });
    if (ctx.signal?.aborted) controller.abort();
    const requests = new RequestLines(ctx.log, shown);
    try {
      return await this.send(spec, controller.signal, shown, requests, ctx);
    } catch (err) {
      requests.failed(err, timedOut ? `timed out after ${spec.timeoutMs / 1000}s` : ctx.signal?.aborted ? 'cancelled' : undefined);
      if (timedOut) {
        throw new ExecutionError(`${label} timed out after ${spec.timeoutMs / 1000}s`, true, 'timeout');
      }
      if (ctx.signal?.aborted) throw new ExecutionError(`${label} was cancelled`, true, 'cancelled');
      if (err instanceof RefusedAddressError && ctx.sensitive) {
        throw new ExecutionError(`${label}: refused to connect to ${err.reason} (only public addresses are allowed)`, false, 'refused_address');
      }
      if (err instanceof ExecutionError) throw err;
      if (isUndiciError(err, 'UND_ERR_INVALID_ARG')) {
        throw new ExecutionError(`${label}: invalid request: ${shown.cause(err)}`, false);
      }
      throw new ExecutionError(`${label} failed: ${shown.cause(err)}`, true, err instanceof RefusedAddressError ? 'refused_address' : 'connection');
    } finally {
      timer.clear();
      ctx.signal?.removeEventListener('abort', onCancel);
    }
  }

  /** Closes pooled connections; call on shutdown. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /**
   * The request of `spec` (redirects followed); the context's `traceparent` is sent unless the spec
   * sets one itself, and its `nonRetryable` decides whether a status not accepted is retried.
   */
  private async send(spec: HttpSpec, signal: AbortSignal, shown: Shown, requests: RequestLines, ctx: ExecutionContext): Promise<unknown> {
    const { traceparent } = ctx;
    let url = spec.url;
    let method = spec.method;
    let body = spec.body;
    let headers = traceparent && !Object.keys(spec.headers).some((h) => h.toLowerCase() === 'traceparent') ? { ...spec.headers, traceparent } : spec.headers;
    for (let hop = 0; ; hop++) {
      requests.sent(method, url);
      const res = await request(url, { method, headers, body, signal, dispatcher: this.agent });
      const location = firstHeader(res.headers.location);
      if (REDIRECT_STATUSES.has(res.statusCode) && location !== undefined) {
        await res.body.dump();
        requests.answered(res.statusCode);
        if (hop === MAX_REDIRECTS) {
          throw new ExecutionError(`HTTP ${spec.method} ${shown.url(spec.url)}: more than ${MAX_REDIRECTS} redirects`);
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new ExecutionError(`HTTP ${method} ${shown.url(url)} redirected to an invalid location`);
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw new ExecutionError(`HTTP ${method} ${shown.url(url)} redirected to unsupported scheme ${next.protocol}`, false);
        }
        const toGet = (res.statusCode === 303 && method !== 'HEAD') || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST');
        headers = redirectHeaders(headers, toGet, next.origin !== url.origin);
        if (toGet) {
          method = 'GET';
          body = undefined;
        }
        url = next;
        continue;
      }

      const raw = await this.readBody(res, `HTTP ${method} ${shown.url(url)}`);
      requests.answered(res.statusCode);
      const accepted = spec.accept.some(([lo, hi]) => res.statusCode >= lo && res.statusCode <= hi);
      const contentType = firstHeader(res.headers['content-type']) ?? '';
      if (!accepted) {
        const excerpt = shown.excerpt(decodeText(raw, contentType));
        throw statusError(
          `HTTP ${method} ${shown.url(url)} returned status ${res.statusCode}` + (excerpt ? `: ${excerpt}` : ''),
          res.statusCode,
          ctx.nonRetryable,
        );
      }
      const parsed = parseBody(raw, contentType);
      if (!spec.full) return parsed;
      return { status: res.statusCode, headers: { ...res.headers }, body: parsed };
    }
  }

  /** The response body; `label` (method and url as shown) names the request in its error. */
  private async readBody(res: Dispatcher.ResponseData, label: string): Promise<Buffer> {
    const limit = this.maxResponseBytes;
    const tooLarge = (): ExecutionError => new ExecutionError(`${label}: response body exceeds ${limit} bytes (OUTPUT_TOO_LARGE)`, true, 'output_too_large');
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
}

/**
 * The log lines of one execution's requests, one per request sent (each redirect hop too):
 * `GET http://host/path -> 200 (12 ms)`, or the error instead of the status
 * (`GET <redacted url> -> failed: ECONNREFUSED (3 ms)`), the url as `shown` shows it. The
 * duration runs from the request to the end of its body.
 */
class RequestLines {
  private pending: { method: string; url: URL; at: number } | undefined;

  constructor(
    private readonly log: AttemptLog | undefined,
    private readonly shown: Shown,
  ) {}

  sent(method: string, url: URL): void {
    this.pending = { method, url, at: performance.now() };
  }

  answered(status: number): void {
    this.end(String(status));
  }

  /** The request under way failed: `why`, else what the error says (as `shown` shows it). */
  failed(err: unknown, why?: string): void {
    const text = why ?? (err instanceof ExecutionError ? err.message : this.shown.cause(err));
    this.end(`failed: ${text}`);
  }

  private end(result: string): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    this.log?.line(`${p.method} ${this.shown.url(p.url)} -> ${result} (${Math.round(performance.now() - p.at)} ms)`);
  }
}

/**
 * The failure of a status not accepted: retryable, unless `nonRetryable` matches it; then it fails
 * for good and the message says so and why (`… returned status 404: … (non-retryable: 4xx, not retried)`).
 */
export function statusError(message: string, status: number, nonRetryable: readonly NonRetryableStatus[] | undefined): ExecutionError {
  const matched = nonRetryableMatch(nonRetryable, status);
  if (matched === undefined) return new ExecutionError(message, true, 'http_status');
  return new ExecutionError(`${message} (non-retryable: ${matched}, not retried)`, false, 'http_status');
}

/** Headers for the next hop: never `host`; no content headers when the body is dropped; no credentials across origins. */
function redirectHeaders(headers: Record<string, string | string[]>, dropContent: boolean, crossOrigin: boolean): Record<string, string | string[]> {
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

/**
 * A cause without its message (which may quote the url or the host): its code, else its class
 * name (read by shape: Node's errors may come from another realm).
 */
function errorKind(err: unknown): string {
  if (typeof err !== 'object' || err === null) return typeof err;
  const { code, name, errors } = err as { code?: unknown; name?: unknown; errors?: unknown };
  if (Array.isArray(errors) && errors.length > 0) return [...new Set(errors.map(errorKind))].join('; ');
  if (typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code)) return code;
  return typeof name === 'string' && /^\w{1,64}$/.test(name) ? name : 'Error';
}
