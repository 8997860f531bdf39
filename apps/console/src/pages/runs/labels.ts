import type { Json } from '../../api/json.js';

/**
 * A run's labels (`Run.labels`, a JSON object of strings) as `[key, value]` pairs sorted by key,
 * so every page lists them in one order whatever order the database kept. Anything that is not
 * an object gives none; a value that is not a string is shown as its JSON.
 */
export function labelEntries(labels: Json | null | undefined): [string, string][] {
  if (labels === null || labels === undefined || typeof labels !== 'object' || Array.isArray(labels)) return [];
  return Object.entries(labels)
    .map(([key, value]): [string, string] => [key, typeof value === 'string' ? value : JSON.stringify(value)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
