import type { Problem } from '@weft/engine';

/** At most this many problems are listed for one argument. */
const MAX_PROBLEMS = 10;
/** Deepest JSON nesting accepted (as the coordinator); deeper values overflow recursive copies. */
const MAX_DEPTH = 1000;

const SUSPECT = /[\u0000\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Why PostgreSQL cannot store `s` (`text` refuses U+0000, `jsonb` also a lone UTF-16
 * surrogate): `contains a NUL character`, `contains a lone surrogate (U+D800)`; undefined when
 * it can.
 */
export function unstorableText(s: string): string | undefined {
  if (!SUSPECT.test(s)) return undefined;
  if (s.includes('\u0000')) return 'contains a NUL character';
  const m = LONE_SURROGATE.exec(s);
  return m ? `contains a lone surrogate (U+${m[0].charCodeAt(0).toString(16).toUpperCase()})` : undefined;
}

/** Where the walk is: `jsonFields` names the members of an input object that hold JSON. */
export interface StorableShape {
  jsonFields: ReadonlySet<string>;
}

/**
 * Every string in an argument value that PostgreSQL cannot store (and JSON nested deeper than
 * 1000 levels), each as a problem whose path
 * names the field and, inside a JSON value, the JSON path: `idempotencyKey`,
 * `filter.workflowId`, `input.$.customer.name`, `payload.$[0]`, `config.$` (for a bad key,
 * reported on the object that holds it). `prefix` is the path of `value` itself ('' for the
 * members of a mutation's `input` object); `shape` tells which members are JSON (without it,
 * members are walked as plain fields).
 */
export function unstorableProblems(value: unknown, prefix: string, shape?: StorableShape): Problem[] {
  const out: Problem[] = [];
  if (value === null || value === undefined) return out;
  if (typeof value === 'string') {
    const bad = unstorableText(value);
    if (bad) out.push({ path: prefix, message: bad });
    return out;
  }
  if (typeof value !== 'object' || value instanceof Date) return out;
  for (const [key, member] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (shape?.jsonFields.has(key)) walkJson(member, `${path}.$`, 0, out);
    else out.push(...unstorableProblems(member, path));
    if (out.length >= MAX_PROBLEMS) break;
  }
  return out.slice(0, MAX_PROBLEMS);
}

/** Every string or key in a JSON value that PostgreSQL cannot store; `path` is the value's own (`definition.$`). */
export function unstorableJson(value: unknown, path: string): Problem[] {
  const out: Problem[] = [];
  walkJson(value, path, 0, out);
  return out;
}

function walkJson(v: unknown, path: string, depth: number, out: Problem[]): void {
  if (out.length >= MAX_PROBLEMS) return;
  if (depth > MAX_DEPTH) {
    out.push({ path: path.length > 120 ? `${path.slice(0, 120)}…` : path, message: `is nested deeper than ${MAX_DEPTH} levels` });
    return;
  }
  if (typeof v === 'string') {
    const bad = unstorableText(v);
    if (bad) out.push({ path, message: bad });
    return;
  }
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    v.forEach((item, i) => walkJson(item, `${path}[${i}]`, depth + 1, out));
    return;
  }
  for (const [k, item] of Object.entries(v)) {
    const bad = unstorableText(k);
    if (bad) {
      out.push({ path, message: `a key ${bad}` });
      continue;
    }
    walkJson(item, IDENTIFIER.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, depth + 1, out);
  }
}
