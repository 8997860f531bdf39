/** The targets the benchmarks are measured against, and the small formatting helpers both print with. */

/** Weft steps/s must reach at least this fraction of pgbench's commits/s (8 clients each). */
export const THROUGHPUT_TARGET = 0.25;
/** A Weft step alone must take at most this many raw Bull hops. */
export const LATENCY_TARGET = 5;
/** Engine µs/event of a 10,000-node DAG over a 100-node one, at most. */
export const ENGINE_RATIO_TARGET = 1.5;

/** `n` with `digits` decimals and thousands separators; `n/a` for undefined or NaN. */
export function fmt(n: number | undefined, digits = 1): string {
  if (n === undefined || !Number.isFinite(n)) return 'n/a';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A text table: the first column and, with `lastLeft`, the last are left-aligned, the others right-aligned. */
export function table(headers: string[], rows: string[][], lastLeft = false): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const left = (i: number) => i === 0 || (lastLeft && i === headers.length - 1);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (left(i) ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

/** `met` / `NOT MET`. */
export function verdict(met: boolean | undefined): string {
  return met === undefined ? 'n/a' : met ? 'met' : 'NOT MET';
}
