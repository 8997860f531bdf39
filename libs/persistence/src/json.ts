/**
 * A JSON value as stored in a `jsonb` column. Persistence keeps its own alias so it never
 * imports the engine (`libs/persistence` imports neither the engine nor an app).
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * `value` as a `jsonb` column gives it back: every object's keys in `jsonb`'s order (shorter
 * UTF-8 byte length first, then bytewise), numbers and strings as they are. For an answer built
 * from a value just written, which must equal the one a later read returns (a JS object enumerates
 * integer-like keys first whatever the insertion order, as it does for a parsed read).
 */
export function asStoredJson(value: Json): Json {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(asStoredJson);
  const keys = Object.keys(value).map((k) => ({ k, b: Buffer.from(k, 'utf8') }));
  keys.sort((x, y) => x.b.length - y.b.length || Buffer.compare(x.b, y.b));
  const out: { [key: string]: Json } = {};
  // defineProperty: `out["__proto__"] = …` would set the prototype, not a key (a parsed read has the key).
  for (const { k } of keys) Object.defineProperty(out, k, { value: asStoredJson(value[k]!), enumerable: true, writable: true, configurable: true });
  return out;
}
