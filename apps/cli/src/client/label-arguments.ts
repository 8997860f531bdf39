import { InvalidArgumentError } from 'commander';
import { RUN_LABEL_KEY_MAX_CHARS, RUN_LABEL_VALUE_MAX_CHARS, RUN_LABELS_MAX } from '@weft/contract';

/** The help of `--label`. */
export const LABEL_HELP = `KEY=VALUE, repeatable (at most ${RUN_LABELS_MAX}; keys of A-Z a-z 0-9 _ . -, up to ${RUN_LABEL_KEY_MAX_CHARS} characters; values up to ${RUN_LABEL_VALUE_MAX_CHARS})`;

const KEY = new RegExp(`^[A-Za-z0-9_.-]{1,${RUN_LABEL_KEY_MAX_CHARS}}$`);

/**
 * The parser of a repeatable `--label KEY=VALUE`: each one added to the labels given before it
 * (`previous`), split at the first `=` (the value may hold more, or be empty). The limits are the
 * API's, checked here so a mistake is a usage error before anything is sent.
 * @throws InvalidArgumentError for text without `=`, a key outside `[A-Za-z0-9_.-]{1,64}`, a value
 * over 256 characters, a key given twice, or more than 16 labels.
 */
export function label(v: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = v.indexOf('=');
  if (at < 0) throw new InvalidArgumentError(`must be KEY=VALUE, got ${JSON.stringify(v)}`);
  const key = v.slice(0, at);
  const value = v.slice(at + 1);
  if (!KEY.test(key)) throw new InvalidArgumentError(`key ${JSON.stringify(key)} must be 1 to ${RUN_LABEL_KEY_MAX_CHARS} characters of A-Z a-z 0-9 _ . -`);
  if ([...value].length > RUN_LABEL_VALUE_MAX_CHARS) throw new InvalidArgumentError(`value of ${key} is longer than ${RUN_LABEL_VALUE_MAX_CHARS} characters`);
  const labels = { ...previous };
  if (key in labels) throw new InvalidArgumentError(`label ${key} is given twice`);
  labels[key] = value;
  if (Object.keys(labels).length > RUN_LABELS_MAX) throw new InvalidArgumentError(`at most ${RUN_LABELS_MAX} labels may be given`);
  return labels;
}

/** Labels (a run's or a schedule's, a JSON object of strings) as one table cell: `k=v,k2=v2` by key; `-` for none. */
export function labelsText(labels: unknown): string {
  const entries = labels && typeof labels === 'object' ? Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
  return entries.length === 0 ? '-' : entries.map(([k, v]) => `${k}=${String(v)}`).join(',');
}
