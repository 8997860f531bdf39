import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted (recursively) and no whitespace, so two definitions that differ
 * only in key order or formatting have the same text. `undefined` members are dropped, as
 * `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** Hex sha256 of {@link canonicalJson}. */
export function definitionChecksum(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition), 'utf8').digest('hex');
}
