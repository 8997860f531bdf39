/**
 * A SWITCH task's decision as one line, the same for the run history, `weft run-status` and the
 * console: the decision's shape is the API's `Task.decision` (TaskDecision).
 */

/** What {@link decisionText} reads of a decision. */
export interface DecisionShape {
  branches: readonly string[];
  default?: string | null;
  defaultTaken: boolean;
  conditions: readonly { to: string; condition?: string | null; value: boolean }[];
}

/**
 * `default taken: <id>`, or, when nothing was selected, `no branch taken: conditions evaluated:
 * to=a {{…}} → false; …`; undefined for a decision that took an ordinary branch.
 */
export function decisionText(d: DecisionShape): string | undefined {
  if (d.defaultTaken) return `default taken: ${d.default ?? '?'}`;
  if (d.branches.length > 0) return undefined;
  const list = d.conditions.map((c) => `to=${c.to} ${c.condition ?? '(no condition)'} → ${String(c.value)}`).join('; ');
  return `no branch taken: conditions evaluated: ${list === '' ? '(none)' : list}`;
}
