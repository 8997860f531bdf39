import { Option, type Command } from 'commander';
import YAML from 'yaml';

/** How a read command prints: `table` for people (the default), `json` and `yaml` for programs. */
export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Adds `-o, --output <format>` (one of {@link OUTPUT_FORMATS}, default `table`) to `cmd`. */
export function withOutput(cmd: Command): Command {
  return cmd.addOption(new Option('-o, --output <format>', 'output: table (text for people), json or yaml').choices(OUTPUT_FORMATS).default('table'));
}

/** `value` as indented JSON or as YAML (strings never folded), each ending in a newline. */
export function formatData(format: 'json' | 'yaml', value: unknown): string {
  return format === 'json' ? `${jsonText(value, 2)}\n` : YAML.stringify(value, { lineWidth: 0 });
}

/**
 * `JSON.stringify(value, null, indent)` with DEL, the C1 controls (U+007F–U+009F; U+009B starts a
 * terminal escape) and the line separators written as `\u` escapes, which JSON leaves as they
 * are: the same JSON value, whose text cannot drive a terminal.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f\u2028\u2029]/g, unicodeEscape);
}

/** `c` (one UTF-16 unit) as the escape `\uXXXX`. */
function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Prints `value` on stdout: as JSON or YAML for those formats, else the text `table()` returns
 * (called only then, so a table is never built for a program).
 */
export function printAs(format: OutputFormat, value: unknown, table: () => string): void {
  process.stdout.write(format === 'table' ? table() : formatData(format, value));
}

/**
 * A value as one table cell: `-` for null or undefined, a string as it is and anything else as
 * compact JSON; control characters (a newline in an error, a terminal escape in a name a tenant
 * chose) are shown escaped, as JSON writes them, so that a cell stays on its line and cannot
 * drive the terminal.
 */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return escapeControls(typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * `text` with every control character (C0, DEL, C1) and line or paragraph separator written as
 * JSON escapes it (`\n`, `\u001b`), and as `\uXXXX` where JSON leaves it raw (DEL, U+0080 to
 * U+009F, U+2028, U+2029); `keep` lists characters left as they are (e.g. a tab).
 */
export function escapeControls(text: string, keep = ''): string {
  return text.replace(/[\p{Cc}\u2028\u2029]/gu, (c) => {
    if (keep.includes(c)) return c;
    const json = JSON.stringify(c).slice(1, -1);
    return json !== c ? json : unicodeEscape(c);
  });
}

/** `text` cut to `max` characters, ending in `…` when cut. */
export function clip(text: string, max: number): string {
  return [...text].length <= max ? text : `${[...text].slice(0, max - 1).join('')}…`;
}

/**
 * Rows as left-aligned columns separated by two spaces, the header first, each line ending in a
 * newline; the last column is not padded. Cells are taken as they are: pass them through
 * {@link cell} first.
 */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** `label value` lines with the values aligned, for the head of a `run-status`-like view. */
export function fields(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`.trimEnd()).join('\n') + '\n';
}

/** An instant for people: RFC 3339 in UTC to the second (`2030-01-01T12:00:00Z`), `-` for none. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '-';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A length of time in milliseconds for people: `850ms`, `4.2s`, `3m12s`, `2h05m`, `3d04h`.
 * Negative inputs count as 0.
 */
export function duration(ms: number): string {
  const t = Math.max(0, Math.round(ms));
  if (t < 1000) return `${t}ms`;
  if (t < 10_000) return `${(Math.floor(t / 100) / 10).toFixed(1).replace(/\.0$/, '')}s`;
  if (t < 60_000) return `${Math.floor(t / 1000)}s`;
  const s = Math.floor(t / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${two(Math.floor((s % 86_400) / 3600))}h`;
}

/**
 * How long a run or task took: finished − created, or for one still going the time since it was
 * created until `now` (ms since the epoch). `-` when `createdAt` is missing.
 */
export function took(createdAt: string | null | undefined, finishedAt: string | null | undefined, now: number): string {
  if (!createdAt) return '-';
  const end = finishedAt ? Date.parse(finishedAt) : now;
  return duration(end - Date.parse(createdAt));
}
