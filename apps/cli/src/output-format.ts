import { InvalidArgumentError } from 'commander';
import YAML from 'yaml';

/** How `weft queues` and `weft workers` print: a table with a header, or the API's answer as JSON or YAML. */
export type OutputFormat = 'table' | 'json' | 'yaml';

/** The formats `-o` accepts. */
export const FORMATS: readonly OutputFormat[] = ['table', 'json', 'yaml'];

/** `-o` parsed: one of {@link FORMATS}, in any case. */
export function outputFormat(v: string): OutputFormat {
  const f = v.trim().toLowerCase();
  if (!(FORMATS as readonly string[]).includes(f)) throw new InvalidArgumentError(`must be one of ${FORMATS.join(', ')}`);
  return f as OutputFormat;
}

/** Rows as left-aligned columns two spaces apart, the header first (the last column is not padded). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** `value` as `format` prints it: JSON (indented) or YAML; the table is each command's own. */
export function printed(value: unknown, format: Exclude<OutputFormat, 'table'>): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : YAML.stringify(value);
}

/** A duration in milliseconds as people read it: `850ms`, `4.2s`, `3m12s`, `2h05m`; `-` for none. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const s = Math.floor(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3_600)}h${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')}m`;
}
