import { badCharacter, findUnstorable, type Problem } from '@weft/engine';

/** At most this many problems are listed for one argument. */
const MAX_PROBLEMS = 10;

/**
 * Why PostgreSQL cannot store `s` (`text` refuses U+0000, `jsonb` also a lone UTF-16
 * surrogate): `contains a NUL character`, `contains a lone surrogate U+D800`; undefined when it
 * can. The character rules are the coordinator's (`badCharacter` in @weft/engine).
 */
export function unstorableText(s: string): string | undefined {
  const bad = badCharacter(s);
  return bad ? `contains a ${bad}` : undefined;
}

/** Where the walk is: `jsonFields` names the members of an input object that hold JSON. */
export interface StorableShape {
  jsonFields: ReadonlySet<string>;
}

/**
 * Every string in an argument value that PostgreSQL cannot store, each as a problem whose path
 * names the field and, inside a JSON value, the JSON path of the first bad part: `idempotencyKey`,
 * `filter.workflowId`, `input.$.customer.name`, `payload.$[0]`. `prefix` is the path of `value`
 * itself ('' for the members of a mutation's `input` object); `shape` tells which members are
 * JSON (without it, members are walked as plain fields).
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
    if (shape?.jsonFields.has(key)) out.push(...unstorableJson(member, `${path}.$`));
    else out.push(...unstorableProblems(member, path));
    if (out.length >= MAX_PROBLEMS) break;
  }
  return out.slice(0, MAX_PROBLEMS);
}

/**
 * The first string, key or nesting level of a JSON value that PostgreSQL cannot store, as a
 * problem (empty when storable); `path` is the value's own (`definition.$`), extended by the
 * JSON path of the bad part (`definition.$.nodes[0].spec.url`).
 */
export function unstorableJson(value: unknown, path: string): Problem[] {
  const bad = findUnstorable(value);
  if (!bad) return [];
  const message = /^(nested|not JSON)/.test(bad.reason) ? `is ${bad.reason}` : `contains a ${bad.reason}`;
  const rest = bad.path.slice(1); // the JSON path without its leading `$`
  return [{ path: `${path}${rest.length > 200 ? `${rest.slice(0, 200)}…` : rest}`, message }];
}
