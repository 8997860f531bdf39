/**
 * What PostgreSQL can store, as pure checks on JSON values (no `node:` imports, no Buffer), shared
 * by the state machine and the coordinator. `jsonb` rejects a NUL character (U+0000) in any
 * string or key and a lone UTF-16 surrogate (both SQLSTATE class 22); `text` rejects NUL.
 */

/** Deepest nesting accepted (PostgreSQL's jsonb parser and `JSON.stringify` overflow far below 100 000). */
export const MAX_JSON_DEPTH = 1000;

/** Default largest task output, in bytes of its JSON text (1 MiB). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** Default largest signal payload, run input or run config, in bytes of its JSON text (1 MiB). */
export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024;

/** Longest stored failure text, in UTF-16 code units; longer ones are cut (8 KiB). */
export const MAX_ERROR_CHARS = 8 * 1024;

/** Longest signal name, idempotency key or node id a user may send, in UTF-16 code units. */
export const MAX_NAME_CHARS = 1024;

/** Why a value cannot be stored, and where: `path` is a JSON path (`$`, `$.a[0]`, `$["x y"]`). */
export interface Unstorable {
  path: string;
  reason: string;
}

/** A cheap first test: a string without a match holds no NUL and no surrogate, so it is storable. */
export const SUSPECT = /[\u0000\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Every character PostgreSQL refuses: NUL and lone surrogates (global: use with `replace`). */
export const BAD_CHARS = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * What in `s` PostgreSQL cannot hold: `'NUL character'`, `'lone surrogate U+D800'`, or
 * undefined when `s` is storable (well-formed UTF-16 without U+0000).
 */
export function badCharacter(s: string): string | undefined {
  if (!SUSPECT.test(s)) return undefined;
  if (s.includes('\u0000')) return 'NUL character';
  const m = LONE_SURROGATE.exec(s);
  return m ? `lone surrogate U+${m[0].charCodeAt(0).toString(16).toUpperCase()}` : undefined;
}

/**
 * The first part of `value` a `jsonb` column cannot hold, depth first: a string or key with a
 * NUL character or a lone surrogate, a value that is not JSON (bigint, function, symbol), or
 * nesting deeper than {@link MAX_JSON_DEPTH}. Undefined when the value is storable.
 * Non-finite numbers and `undefined` are accepted: `JSON.stringify` writes them as `null`.
 */
export function findUnstorable(value: unknown): Unstorable | undefined {
  return walk(value, '$', 0);
}

function walk(v: unknown, path: string, depth: number): Unstorable | undefined {
  switch (typeof v) {
    case 'string': {
      const bad = badCharacter(v);
      return bad ? { path, reason: bad } : undefined;
    }
    case 'number':
    case 'boolean':
    case 'undefined':
      return undefined;
    case 'bigint':
    case 'function':
    case 'symbol':
      return { path, reason: `not JSON (${typeof v})` };
  }
  if (v === null) return undefined;
  if (depth >= MAX_JSON_DEPTH) return { path, reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  // Date and friends: what JSON.stringify will write is what toJSON returns.
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return walk((v as { toJSON(): unknown }).toJSON(), path, depth + 1);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const bad = walk(v[i], `${path}[${i}]`, depth + 1);
      if (bad) return bad;
    }
    return undefined;
  }
  for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
    const at = pathOf(path, k);
    const badKey = badCharacter(k);
    if (badKey) return { path: at, reason: `${badKey} in key` };
    const bad = walk(item, at, depth + 1);
    if (bad) return bad;
  }
  return undefined;
}

/** `path.key`, or `path["key"]` with the key JSON-escaped (so a NUL in a key prints as `\u0000`). */
export function pathOf(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** `512 B`, `4 KiB`, `2.3 MiB` (one decimal, none when it is 0). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const [value, unit] = n < 1024 * 1024 ? [n / 1024, 'KiB'] : [n / (1024 * 1024), 'MiB'];
  return `${value.toFixed(1).replace(/\.0$/, '')} ${unit}`;
}
