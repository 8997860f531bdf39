/**
 * A JSON value as stored in a `jsonb` column. Persistence keeps its own alias so it never
 * imports the engine (`libs/persistence` imports neither the engine nor an app).
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * `value` as a `jsonb` column gives it back: object keys in jsonb's order (shorter keys first,
 * then by their bytes). A value built in memory and one read from the column then print alike
 * (a JS object enumerates integer-like keys first whatever the insertion order, as a parsed read
 * does). `Object.fromEntries` defines each key as its own, `__proto__` included.
 */
export function asJsonb<T>(value: T): T {
  if (Array.isArray(value)) return value.map(asJsonb) as T;
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort(jsonbKeyOrder);
  return Object.fromEntries(keys.map((k) => [k, asJsonb((value as Record<string, unknown>)[k])])) as T;
}

function jsonbKeyOrder(a: string, b: string): number {
  const la = Buffer.byteLength(a);
  const lb = Buffer.byteLength(b);
  if (la !== lb) return la - lb;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Bytes of `value`'s text as PostgreSQL prints a `jsonb` (`octet_length(col::text)`: `", "` and
 * `": "` between items, keys in jsonb's order); 0 for null. Numbers print as JavaScript does,
 * which matches PostgreSQL but for exponents (1e+21 is printed in full by PostgreSQL).
 */
export function jsonbTextBytes(value: unknown): number {
  if (value === null || value === undefined) return 0;
  return Buffer.byteLength(jsonbText(value));
}

function jsonbText(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jsonbText).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort(jsonbKeyOrder);
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${jsonbText((v as Record<string, unknown>)[k])}`).join(', ')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
