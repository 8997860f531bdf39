import type { Json } from './types.js';

/** What a JSON text field holds: its value, or why it is not JSON (naming the field). */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Parses a form field's JSON text. `label` names the field in the problem, as in
 * `Input is not valid JSON: Unexpected token …`. With `object: true` the value must be a JSON
 * object (run input, config). An empty text is `fallback` when one is given.
 */
export function parseJsonField(label: string, text: string, options: { object?: boolean; fallback?: Json } = {}): Parsed<Json> {
  if (!text.trim()) {
    if (options.fallback !== undefined) return { ok: true, value: options.fallback };
    return { ok: false, error: `${label} is empty: enter JSON${options.object ? ' (an object, e.g. {})' : ', e.g. {}'}.` };
  }
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch (err) {
    return { ok: false, error: `${label} is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (options.object && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    return { ok: false, error: `${label} must be a JSON object ({…}), not ${describe(value)}.` };
  }
  return { ok: true, value };
}

/** A value as indented JSON text (two spaces); `undefined` as an empty text. */
export function prettyJson(value: Json | undefined): string {
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2);
}

function describe(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
