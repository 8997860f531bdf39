import { MAX_DURATION_SECONDS } from '@weft/engine';
import { ExecutionError } from './executor.js';

/** Accepted statuses, inclusive. */
export type AcceptRange = readonly [number, number];

/** An HTTP task's spec, checked. */
export interface HttpSpec {
  url: URL;
  method: string;
  headers: Record<string, string | string[]>;
  body: string | undefined;
  timeoutMs: number;
  accept: AcceptRange[];
  full: boolean;
}

const DEFAULT_TIMEOUT_SECONDS = 30;

/**
 * The HTTP spec of a task (the node's resolved `spec`); see {@link HttpExecutor} for the fields.
 * With `sensitive`, its messages do not repeat the url or the method given.
 * @throws ExecutionError (not retryable) naming what is wrong.
 */
export function parseSpec(input: unknown, sensitive = false): HttpSpec {
  if (!isRecord(input)) throw invalid('spec must be an object');
  const { url: rawUrl, method = 'GET', headers: rawHeaders, body: rawBody } = input;
  if (typeof rawUrl !== 'string' || rawUrl.trim() === '') throw invalid('spec.url is required');
  let url: URL;
  try {
    url = new URL(rawUrl.trim());
  } catch {
    throw invalid(sensitive ? 'spec.url is not a valid URL' : `spec.url is not a valid URL: ${rawUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`spec.url scheme ${url.protocol} is not supported (http: and https: only)`);
  }
  if (typeof method !== 'string' || !/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*$/.test(method)) {
    throw invalid(sensitive ? 'spec.method is not a valid HTTP method' : `spec.method is not a valid HTTP method: ${String(method)}`);
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
  // The validator's bound, for a timeout a template computed: every accepted one is waited out in full.
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_DURATION_SECONDS) {
    throw invalid(`spec.timeout_seconds must be a positive number of seconds, at most ${MAX_DURATION_SECONDS} (365 days)`);
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function invalid(message: string): ExecutionError {
  return new ExecutionError(`invalid HTTP spec: ${message}`, false);
}
