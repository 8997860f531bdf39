/**
 * JOIN reducers: a JOIN with
 * `spec.reducers: {field: reducer}` outputs the field-by-field merge of its predecessors' object
 * outputs. Pure: no I/O, no clock; the state machine gathers the contributions.
 */
import type { JsonObject, JsonValue } from './workflow-types.js';

/** The reducers `spec.reducers` may name, lower-case. */
export const REDUCER_NAMES = ['add', 'append', 'union', 'min', 'max', 'merge', 'and', 'or', 'concat', 'replace'] as const;
/** One reducer name. */
export type ReducerName = (typeof REDUCER_NAMES)[number];

/** True when `v` names a known reducer. */
export function isReducerName(v: unknown): v is ReducerName {
  return typeof v === 'string' && (REDUCER_NAMES as readonly string[]).includes(v);
}

/** One predecessor's output, in incoming-edge order. */
export interface Contribution {
  nodeId: string;
  output: JsonValue;
}

/** The merged JOIN output, or why the merge failed (a type mismatch or an unknown reducer). */
export type ReduceResult = { ok: true; output: JsonObject } | { ok: false; error: string };

/**
 * The `reducers` map of a JOIN node's spec, or `undefined` when the spec has none (the JOIN then
 * keeps its plain `{}` output). Values are not checked here: {@link reduceJoin} refuses unknown ones.
 */
export function joinReducers(spec: JsonValue | undefined): Readonly<Record<string, JsonValue>> | undefined {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
  const r = (spec as JsonObject).reducers;
  if (r === undefined) return undefined;
  return r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as JsonObject) : {};
}

function kind(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function withArticle(k: string): string {
  return `${/^[aeiou]/.test(k) ? 'an' : 'a'} ${k}`;
}

function isObject(v: JsonValue): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** JSON text with object keys sorted at every level: equal for deeply equal values. */
export function canonicalJson(v: JsonValue): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k] as JsonValue)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function setKey(obj: JsonObject, key: string, value: JsonValue): void {
  // defineProperty: a field named "__proto__" is data, not the prototype.
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** What each reducer accepts, for the mismatch message. */
const EXPECTS: Record<Exclude<ReducerName, 'replace'>, string> = {
  add: 'a number',
  min: 'a number',
  max: 'a number',
  append: 'an array',
  union: 'an array',
  merge: 'an object',
  and: 'a boolean',
  or: 'a boolean',
  concat: 'a string',
};

function accepts(r: Exclude<ReducerName, 'replace'>, v: JsonValue): boolean {
  switch (r) {
    case 'add':
    case 'min':
    case 'max':
      return typeof v === 'number';
    case 'append':
    case 'union':
      return Array.isArray(v);
    case 'merge':
      return isObject(v);
    case 'and':
    case 'or':
      return typeof v === 'boolean';
    case 'concat':
      return typeof v === 'string';
    default: {
      const never: never = r;
      return never;
    }
  }
}

/** Folds `next` into `acc` (both already type-checked); `acc` undefined means "no value yet". */
function fold(r: Exclude<ReducerName, 'replace'>, acc: JsonValue | undefined, next: JsonValue): JsonValue {
  if (acc === undefined) {
    if (r === 'union') return dedupe([], next as JsonValue[]);
    if (r === 'append') return [...(next as JsonValue[])];
    if (r === 'merge') return mergeObjects({}, next as JsonObject);
    return next;
  }
  switch (r) {
    case 'add':
      return (acc as number) + (next as number);
    case 'min':
      return Math.min(acc as number, next as number);
    case 'max':
      return Math.max(acc as number, next as number);
    case 'append':
      return [...(acc as JsonValue[]), ...(next as JsonValue[])];
    case 'union':
      return dedupe(acc as JsonValue[], next as JsonValue[]);
    case 'merge':
      return mergeObjects(acc as JsonObject, next as JsonObject);
    case 'and':
      return (acc as boolean) && (next as boolean);
    case 'or':
      return (acc as boolean) || (next as boolean);
    case 'concat':
      return (acc as string) + (next as string);
    default: {
      const never: never = r;
      return never;
    }
  }
}

/** `acc` followed by the elements of `next` not deeply equal to one already present. */
function dedupe(acc: JsonValue[], next: JsonValue[]): JsonValue[] {
  const seen = new Set(acc.map(canonicalJson));
  const out = [...acc];
  for (const v of next) {
    const key = canonicalJson(v);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(v);
    }
  }
  return out;
}

/** Shallow merge into a fresh object, later keys winning. */
function mergeObjects(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(a)) setKey(out, k, v);
  for (const [k, v] of Object.entries(b)) setKey(out, k, v);
  return out;
}

/**
 * Merges the JOIN's contributions field by field, in the order given (the caller passes
 * the completed predecessors in incoming-edge order, so the result never depends on completion
 * order):
 * - a contribution whose output is not a JSON object (null, an array, a scalar) contributes nothing;
 * - a field listed in `reducers` is folded with its reducer; a `null` value is the reducer's
 *   identity and is skipped, so a field that only ever holds `null` (or is never provided) stays
 *   absent from the output;
 * - a field not listed (or listed as `replace`) takes the last contribution's value, `null`
 *   included: with the default `replace`, a null wins like any other value;
 * - output keys come in order of first appearance.
 *
 * Returns `{ok: false, error}` naming the field, the reducer and the predecessor node on a type
 * mismatch (e.g. `field "count": reducer add expects a number, but node "b" gave a string`), a sum
 * beyond what JSON can hold (±1.8e308), or for
 * an unknown reducer name. Never throws.
 */
export function reduceJoin(reducers: Readonly<Record<string, JsonValue>>, contributions: readonly Contribution[]): ReduceResult {
  for (const [field, name] of Object.entries(reducers)) {
    if (!isReducerName(name)) {
      return { ok: false, error: `field "${field}": unknown reducer ${JSON.stringify(name)}; expected one of ${REDUCER_NAMES.join(', ')}` };
    }
  }
  const acc = new Map<string, JsonValue>();
  for (const c of contributions) {
    if (!isObject(c.output)) continue;
    for (const [field, value] of Object.entries(c.output)) {
      const r = Object.prototype.hasOwnProperty.call(reducers, field) ? (reducers[field] as ReducerName) : 'replace';
      if (r === 'replace') {
        acc.set(field, value);
        continue;
      }
      if (value === null) continue; // the reducer's identity
      if (!accepts(r, value)) {
        return { ok: false, error: `field "${field}": reducer ${r} expects ${EXPECTS[r]}, but node "${c.nodeId}" gave ${withArticle(kind(value))}` };
      }
      const folded = fold(r, acc.get(field), value);
      if (typeof folded === 'number' && !Number.isFinite(folded)) {
        // JSON has no Infinity: a sum past ±1.8e308 would quietly become null.
        return { ok: false, error: `field "${field}": reducer ${r} overflowed (the sum is beyond ±1.8e308) at node "${c.nodeId}"` };
      }
      acc.set(field, folded);
    }
  }
  const output: JsonObject = {};
  for (const [field, value] of acc) setKey(output, field, value);
  return { ok: true, output };
}
