import type { ApiProblem } from '../../api/problems.js';

/** The retention days field as the form keeps it: '' for "keep runs forever". */
export function retentionText(days: number | null | undefined): string {
  return days === null || days === undefined ? '' : String(days);
}

/**
 * The `retentionDays` to send for the field's text: null for an empty field (keep forever), the
 * number for a whole number (the API decides whether it is in range, and says so), or why the
 * text is not a number at all.
 */
export function retentionInput(text: string): { retentionDays: number | null; problem: null } | { retentionDays: null; problem: string } {
  const t = text.trim();
  if (t === '') return { retentionDays: null, problem: null };
  if (!/^[+-]?\d+$/.test(t) || !Number.isSafeInteger(Number(t))) return { retentionDays: null, problem: `Retention days must be a whole number, not "${t}".` };
  return { retentionDays: Number(t), problem: null };
}

/** True when `problem` is about the retention field: its path is `retentionDays` (or `input.retentionDays`). */
export function isRetentionProblem(problem: ApiProblem): boolean {
  return /^(input\.)?retentionDays\b/.test(problem.path ?? '');
}

/** What the page says the retention is: "30 days", "1 day", or "forever". */
export function retentionWords(days: number | null): string {
  if (days === null) return 'Runs are kept forever.';
  return `Runs are deleted ${days === 1 ? '1 day' : `${days.toLocaleString('en-US')} days`} after their top-level run ended.`;
}
