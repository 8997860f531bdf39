import type { LoggerService, LogLevel } from '@nestjs/common';
import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import PinoPretty from 'pino-pretty';

/**
 * The log levels Weft processes take (`WEFT_LOG_LEVEL`), most severe first: pino's names. Nest's
 * `log` is pino's `info` and Nest's `verbose` pino's `trace`.
 */
export const WEFT_LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type WeftLogLevel = (typeof WEFT_LOG_LEVELS)[number];

/**
 * The most characters one string of a record (the message, the context, a stack) takes in the
 * log line, JSON escapes included. A longer one is cut, ending with `…[cut N chars]` (N counts the
 * characters of the original string left out).
 */
export const LOG_STRING_CHARS = 2048;

/** The longest line a record can be: three strings of {@link LOG_STRING_CHARS} and the fixed fields. */
export const LOG_LINE_CHARS = 8192;

const NEST_TO_PINO: Record<LogLevel, WeftLogLevel> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * The contexts Nest itself logs its start-up under (`InstanceLoader: XModule dependencies
 * initialized`, `RouterExplorer: Mapped {/graphql, POST} route`…): their `info` records are
 * written at `debug`, so a process's start shows Weft's own lines.
 */
export const FRAMEWORK_CONTEXTS: ReadonlySet<string> = new Set([
  'NestFactory',
  'NestApplication',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'GraphQLModule',
  'NestMicroservice',
]);

/**
 * Nest's LoggerService over pino: one JSON object per line,
 * `{"level":"warn","time":"<ISO 8601>","pid":N,"context":"worker","msg":"…"}` (plus `stack` for an
 * error that has one). Messages carry text tenants chose (a CODE exception, an HTTP answer):
 * JSON keeps their newlines from starting a line of their own (the line separators JSON leaves
 * raw, U+0085, U+2028 and U+2029, are escaped too), and every string is cut to
 * {@link LOG_STRING_CHARS}, so a record is one line of at most {@link LOG_LINE_CHARS}.
 *
 * A structured record is a plain object with a string `msg`: `log.log({ msg, event: 'run.finished',
 * tenantId, runId, … }, 'runs')` writes its other fields into the line beside `msg` (bounded: see
 * `boundedFields`), so logs can be filtered by tenant, run, task and attempt.
 *
 * `new Logger('worker')` from @nestjs/common forwards here once an application was created with
 * it (`NestFactory.create(…, { logger })`). Records go to `destination` when given (tests), else
 * fatal, error and warn to stderr and the rest to stdout, as Nest's console logger does.
 */
export class WeftLogger implements LoggerService {
  private readonly pino: Pino;

  /**
   * `format` `pretty` writes one readable line per record through pino-pretty (time, level,
   * context, message, then the record's fields as JSON; control characters in the message shown
   * escaped, so tenant text cannot start a line); `json` (default) one JSON object per line.
   */
  constructor(
    level: WeftLogLevel = 'info',
    destination?: DestinationStream,
    private readonly format: 'json' | 'pretty' = 'json',
  ) {
    const options = {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label: string) => ({ level: label }) },
    };
    this.pino = pino(options, format === 'pretty' ? prettyStreams(destination) : destination ? escapingLineSeparators(destination) : consoleStreams());
  }

  /** The pino level records are written from. */
  get level(): WeftLogLevel {
    return this.pino.level as WeftLogLevel;
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /** Nest's `app.useLogger([...levels])`: the most verbose level listed becomes the threshold. */
  setLogLevels(levels: LogLevel[]): void {
    const pinoLevels = levels.map((l) => NEST_TO_PINO[l]).filter(Boolean);
    if (pinoLevels.length === 0) {
      this.pino.level = 'silent';
      return;
    }
    this.pino.level = WEFT_LOG_LEVELS[Math.max(...pinoLevels.map((l) => WEFT_LOG_LEVELS.indexOf(l)))]!;
  }

  /**
   * One record. Nest passes the context last (`new Logger('worker')`) and, for errors, a stack
   * before it; any other parameter joins the message.
   */
  private write(given: WeftLogLevel, first: unknown, params: unknown[]): void {
    let message = first;
    if (!this.pino.isLevelEnabled(given)) return;
    const rest = [...params];
    let context: string | undefined;
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string' && !(given === 'error' && rest.length === 1 && looksLikeStack(rest[0]))) {
      context = rest.pop() as string;
    }
    // Nest's own start-up narration (modules loaded, routes mapped) is for debugging Weft itself.
    const level = given === 'info' && context !== undefined && FRAMEWORK_CONTEXTS.has(context) ? 'debug' : given;
    if (!this.pino.isLevelEnabled(level)) return;
    let stack: string | undefined;
    let record: Record<string, unknown> = {};
    if (isRecord(message)) {
      // A structured record: `msg` is the message, the other fields go into the line as they are.
      const { msg, ...rest } = message;
      record = boundedFields(rest);
      message = msg;
    }
    if (message instanceof Error) stack = message.stack;
    const extra: string[] = [];
    for (const p of rest) {
      if (p === undefined) continue;
      if (stack === undefined && looksLikeStack(p)) stack = p as string;
      else extra.push(text(p));
    }
    const msg = [message instanceof Error ? message.message : text(message), ...extra].join(' ');
    const fields: { context?: string; stack?: string } & Record<string, unknown> = record;
    if (context !== undefined) fields.context = clip(context);
    if (stack !== undefined) fields.stack = clip(stack);
    if (this.format === 'pretty') {
      // pino-pretty writes field values as JSON, which leaves some separators and controls raw.
      for (const [k, v] of Object.entries(fields))
        fields[k] = typeof v === 'string' ? visible(v) : Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? visible(x) : x)) : v;
    }
    this.pino[level](fields, this.format === 'pretty' ? visible(clip(msg)) : clip(msg));
  }
}

/**
 * `s` cut so that its JSON text (without the quotes) is at most `limit` characters, marker
 * included: `"`, `\` and the common control characters take 2 characters, other control
 * characters, U+007F-U+009F, U+2028-U+202E, U+2066-U+2069 and lone surrogates 6, the rest 1.
 */
export function clip(s: string, limit = LOG_STRING_CHARS): string {
  if (s.length <= limit / 6) return s;
  let cost = 0;
  const budget = limit - `…[cut ${s.length} chars]`.length;
  let cut = -1;
  for (let end = 0; end < s.length && cost <= limit; end++) {
    const c = s.charCodeAt(end);
    let w = 1;
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) w = 2;
    else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) w = 6;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(end + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        // A pair: two code units, written as they are; never split.
        if (cut < 0 && cost + 2 > budget) cut = end;
        cost += 2;
        end++;
        continue;
      }
      w = 6;
    } else if (c >= 0xdc00 && c <= 0xdfff) w = 6;
    if (cut < 0 && cost + w > budget) cut = end;
    cost += w;
  }
  if (cost <= limit) return s;
  return `${s.slice(0, cut)}…[cut ${s.length - cut} chars]`;
}

/** A structured record: a plain object with a string `msg` (e.g. `{ msg, event, tenantId, runId }`). */
function isRecord(v: unknown): v is { msg: string } & Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Error) && typeof (v as { msg?: unknown }).msg === 'string';
}

/** The most characters one field value of a structured record takes (ids, names, classes). */
const FIELD_CHARS = 128;
/** Fields a record may not replace: pino's own and the logger's. */
const RESERVED = new Set(['level', 'time', 'pid', 'msg', 'context', 'stack', 'hostname']);

/**
 * A structured record's fields, bounded so the line stays within {@link LOG_LINE_CHARS}: strings
 * cut to {@link FIELD_CHARS}, arrays to their first 5 items (cut likewise), numbers and booleans
 * kept, anything else dropped; if their JSON is still over {@link LOG_STRING_CHARS}, fields are
 * dropped from the last until it fits.
 */
function boundedFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const value = (v: unknown): unknown => (typeof v === 'string' ? clip(v, FIELD_CHARS) : typeof v === 'number' || typeof v === 'boolean' ? v : undefined);
  for (const [k, v] of Object.entries(fields)) {
    if (RESERVED.has(k) || k.length > 64) continue;
    const kept = Array.isArray(v)
      ? v
          .slice(0, 5)
          .map(value)
          .filter((x) => x !== undefined)
      : value(v);
    if (kept !== undefined) out[k] = kept;
  }
  const keys = Object.keys(out);
  // As written: the line separators JSON leaves raw are escaped to six characters each.
  const cost = () => JSON.stringify(out).replace(/[\u0080-\u009f\u2028-\u202e\u2066-\u2069]/g, '\\u2028').length;
  while (keys.length > 0 && cost() > LOG_STRING_CHARS) delete out[keys.pop()!];
  return out;
}

function looksLikeStack(v: unknown): boolean {
  return typeof v === 'string' && /\n\s+at /.test(v);
}

/** A value as message text: strings as they are, errors by message, the rest as JSON (or String()). */
function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Error) return v.message;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** The process's stdout and stderr, opened once (every logger of the process shares them). */
let consoleOut: { stdout: DestinationStream; stderr: DestinationStream } | undefined;

/**
 * stderr for warn and above, stdout for the rest. Synchronous writes: a record is out before the
 * process can exit or crash, and in order with what the CLI prints itself.
 */
function consoleStreams(): DestinationStream {
  consoleOut ??= {
    stdout: escapingLineSeparators(pino.destination({ dest: 1, sync: true })),
    stderr: escapingLineSeparators(pino.destination({ dest: 2, sync: true })),
  };
  return pino.multistream(
    [
      { level: 'trace', stream: consoleOut.stdout },
      { level: 'warn', stream: consoleOut.stderr },
    ],
    { dedupe: true },
  );
}

/** Pretty lines: to `destination` when given, else stdout below warn and stderr from warn up, as for JSON. */
function prettyStreams(destination?: DestinationStream): DestinationStream {
  const options = (fd: 1 | 2) => ({
    sync: true,
    singleLine: true,
    colorize: fd === 1 ? process.stdout.isTTY : process.stderr.isTTY,
    translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
    ignore: 'pid,hostname,context',
    messageFormat: '{if context}[{context}] {end}{msg}',
    destination: fd,
  });
  if (destination) return PinoPretty({ ...options(1), colorize: false, destination: destination as never });
  return pino.multistream(
    [
      { level: 'trace', stream: PinoPretty(options(1)) },
      { level: 'warn', stream: PinoPretty(options(2)) },
    ],
    { dedupe: true },
  );
}

/** `s` with line breaks, other control characters and the Unicode line separators written as escapes. */
function visible(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/g, (c) =>
    c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * JSON leaves U+0085, U+2028 and U+2029 raw, and some readers split lines there; it also leaves
 * the other C1 controls (U+0080-U+009F, which some terminals act on) and the bidirectional
 * overrides (U+202A-U+202E, U+2066-U+2069, which reorder what a reader sees): escape them all.
 */
function escapingLineSeparators(out: DestinationStream): DestinationStream {
  const any = /[\u0080-\u009f\u2028-\u202e\u2066-\u2069]/;
  const all = /[\u0080-\u009f\u2028-\u202e\u2066-\u2069]/g;
  const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  return {
    write(line: string) {
      out.write(any.test(line) ? line.replace(all, escape) : line);
    },
  };
}
