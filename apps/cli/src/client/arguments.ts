import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';

/** A JSON option given as `@path` (or `@-`, stdin): read when the command runs, by {@link readJsonOptions}. */
export class JsonFileArgument {
  constructor(
    /** The option, as messages name it: `--input`. */
    readonly option: string,
    /** The file's path, or `-` for stdin. */
    readonly path: string,
  ) {}
}

/**
 * The parser of a JSON option (`--input`, `--config`, `--payload`): inline JSON is parsed now,
 * so malformed text is a usage error; `@path` and `@-` become a {@link JsonFileArgument}, read
 * when the command runs.
 * @throws InvalidArgumentError for inline text that is not JSON, or a bare `@`.
 */
export function jsonOption(option: string) {
  return (v: string): unknown => {
    if (v.startsWith('@')) {
      if (v.length === 1) throw new InvalidArgumentError(`${option} @ needs a file name (@in.json), or @- for stdin`);
      return new JsonFileArgument(option, v.slice(1));
    }
    try {
      return JSON.parse(v);
    } catch (e) {
      throw new InvalidArgumentError(`${option} must be JSON, or @FILE to read it from a file (${(e as Error).message})`);
    }
  };
}

/** Reads all of stdin as UTF-8 text. */
export async function readStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

/**
 * `values` with every {@link JsonFileArgument} replaced by the JSON its file holds (stdin for
 * `@-`); other values are kept.
 * @throws Error naming the option and the file when the file cannot be read or is not JSON, or
 *   when more than one option asks for stdin.
 */
export async function readJsonOptions<T extends Record<string, unknown>>(values: T): Promise<T> {
  const files = Object.entries(values).filter((e): e is [string, JsonFileArgument] => e[1] instanceof JsonFileArgument);
  const fromStdin = files.filter(([, f]) => f.path === '-');
  if (fromStdin.length > 1) throw new Error(`only one option can read stdin: ${fromStdin.map(([, f]) => `${f.option} @-`).join(', ')}`);
  const out: Record<string, unknown> = { ...values };
  for (const [key, f] of files) {
    const name = f.path === '-' ? 'stdin' : `file ${f.path}`;
    let text: string;
    try {
      text = f.path === '-' ? await readStdin() : await readFile(f.path, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a folder' : e.code === 'EACCES' ? 'permission denied' : e.message;
      throw new Error(`${f.option}: cannot read ${name}: ${why}`);
    }
    try {
      out[key] = JSON.parse(text);
    } catch (e) {
      throw new Error(`${f.option}: ${name} is not JSON (${(e as Error).message})`);
    }
  }
  return out as T;
}

/** The parser of a positive integer option or argument; `label` names it in the message. */
export function positiveInt(label: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`${label} must be a positive integer`);
    return n;
  };
}

/** `--priority`: a run's dispatch priority, an integer from 1 (first) to 5. */
export function priority(v: string): number {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || n < 1 || n > 5) throw new InvalidArgumentError('must be an integer from 1 (first) to 5');
  return n;
}

/** The API key roles, as the API's enum values. */
export const ROLES = ['admin', 'operator', 'viewer'];

/** A key role in any case (`operator`, `OPERATOR`) as the API's enum value (`operator`). */
export function role(v: string): string {
  const lower = v.trim().toLowerCase();
  if (!ROLES.includes(lower)) throw new InvalidArgumentError(`must be one of ${ROLES.join(', ')}`);
  return lower;
}

/** The run statuses `--status` takes. */
export const RUN_STATUSES = ['QUEUED', 'PENDING', 'RUNNING', 'PAUSED', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** A run status in any case, as the API's enum value (`FAILED`). */
export function runStatus(v: string): string {
  const up = v.trim().toUpperCase();
  if (!RUN_STATUSES.includes(up)) throw new InvalidArgumentError(`must be one of ${RUN_STATUSES.join(', ')}`);
  return up;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A length of time written as numbers with a unit `s`, `m`, `h` or `d`, several in a row
 * (`90s`, `30m`, `1h30m`, `7d`), in milliseconds; undefined for any other text.
 */
export function lengthMs(v: string): number | undefined {
  const text = v.trim();
  if (!/^(\d+[smhd])+$/.test(text)) return undefined;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms;
}

/**
 * True for an instant in RFC 3339 with an offset (`2030-01-01T00:00:00Z`, `…+05:30`) that names a
 * real day and time (not 30 February, which `Date.parse` rolls over into March).
 */
export function isRfc3339(v: string): boolean {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-](\d\d):(\d\d))$/i.exec(v.trim());
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const day = new Date(Date.UTC(y, mo - 1, d));
  const offsetOk = m[9] === undefined || (Number(m[9]) < 24 && Number(m[10]) < 60);
  return day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d && h < 24 && mi < 60 && s < 60 && offsetOk;
}

/**
 * `--since`: a length of time back from now — a number with a unit `s`, `m`, `h` or `d`, several
 * of them in a row (`90s`, `30m`, `1h30m`, `7d`) — or an instant in RFC 3339 with an offset
 * (`2030-01-01T00:00:00Z`), checked by the API. Returns the length in milliseconds or the instant
 * as written.
 * @throws InvalidArgumentError for anything else.
 */
export function since(v: string): { agoMs: number } | { at: string } {
  const text = v.trim();
  const ms = lengthMs(text);
  if (ms !== undefined) {
    if (ms === 0) throw new InvalidArgumentError('must be longer than 0');
    return { agoMs: ms };
  }
  if (isRfc3339(text)) return { at: text };
  throw new InvalidArgumentError('must be a length of time (30m, 1h, 2h30m, 7d) or an RFC 3339 time (2030-01-01T00:00:00Z)');
}
