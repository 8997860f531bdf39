import { diffLines } from 'diff';

/** One row of a line diff: a line with its numbers on each side, or a fold of unchanged lines. */
export type DiffRow =
  | { kind: 'added'; text: string; newLine: number }
  | { kind: 'removed'; text: string; oldLine: number }
  | { kind: 'same'; text: string; oldLine: number; newLine: number }
  | { kind: 'fold'; count: number };

/**
 * A line diff: its rows, how many lines were added and removed, and whether its lines were
 * aligned (false: the texts differed too much, see {@link lineDiff}).
 */
export interface LineDiff {
  rows: DiffRow[];
  added: number;
  removed: number;
  aligned: boolean;
}

/**
 * The most steps one diff may take: the lines of both texts times the edits it looks through
 * (a shortest edit script costs about that). 2,000 lines each, every one changed, is 16 million:
 * under a second in a browser; 20,000 each would take minutes and freeze the page.
 */
export const MAX_DIFF_STEPS = 16_000_000;

/**
 * The line diff of `before` and `after` (jsdiff's `diffLines`, which finds a shortest edit
 * script), with the unchanged lines further than `context` lines from a change folded into one
 * row each. Line numbers are 1-based; a final line break does not make a line of its own. Texts
 * too different to align within {@link MAX_DIFF_STEPS} keep their common first and last lines
 * and show the lines between as removed, then added (`aligned: false`).
 */
export function lineDiff(before: string, after: string, context = 3): LineDiff {
  const rows: DiffRow[] = [];
  let oldLine = 1;
  let newLine = 1;
  let added = 0;
  let removed = 0;
  const lines = linesOf(before).length + linesOf(after).length + 1;
  const aligned = diffLines(before, after, { maxEditLength: Math.max(1, Math.floor(MAX_DIFF_STEPS / lines)) });
  for (const change of aligned ?? replaced(before, after)) {
    for (const text of linesOf(change.value)) {
      if (change.added) {
        rows.push({ kind: 'added', text, newLine: newLine++ });
        added++;
      } else if (change.removed) {
        rows.push({ kind: 'removed', text, oldLine: oldLine++ });
        removed++;
      } else {
        rows.push({ kind: 'same', text, oldLine: oldLine++, newLine: newLine++ });
      }
    }
  }
  return { rows: fold(rows, context), added, removed, aligned: aligned !== undefined };
}

/** `before` turned into `after` as common first lines, the rest of `before` removed, the rest of `after` added, common last lines. */
function replaced(before: string, after: string): { value: string; added: boolean; removed: boolean }[] {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const part = (lines: string[]) => lines.map((l) => `${l}\n`).join('');
  return [
    { value: part(a.slice(0, head)), added: false, removed: false },
    { value: part(a.slice(head, a.length - tail)), added: false, removed: true },
    { value: part(b.slice(head, b.length - tail)), added: true, removed: false },
    { value: part(a.slice(a.length - tail)), added: false, removed: false },
  ];
}

/**
 * `value` as JSON text with every object's keys in code-point order and two spaces of indent:
 * two definitions that differ only in key order read the same.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
}

function linesOf(value: string): string[] {
  const lines = value.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Folds each run of unchanged lines to its `context` lines next to a change. */
function fold(rows: DiffRow[], context: number): DiffRow[] {
  const out: DiffRow[] = [];
  for (let i = 0; i < rows.length;) {
    if (rows[i]!.kind !== 'same') {
      out.push(rows[i++]!);
      continue;
    }
    let end = i;
    while (end < rows.length && rows[end]!.kind === 'same') end++;
    const keepBefore = i === 0 ? 0 : context; // lines after the change above
    const keepAfter = end === rows.length ? 0 : context; // lines before the change below
    const hidden = end - i - keepBefore - keepAfter;
    // A fold row hiding one line would take the room of the line itself.
    if (hidden <= 1) out.push(...rows.slice(i, end));
    else out.push(...rows.slice(i, i + keepBefore), { kind: 'fold', count: hidden }, ...rows.slice(end - keepAfter, end));
    i = end;
  }
  return out;
}
