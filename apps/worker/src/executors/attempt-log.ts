/**
 * What one attempt printed or did, as its executor records it: lines of its own (an HTTP
 * request's method, url, status and duration) and a process's output (a CODE execution's stdout
 * and stderr, of which only the tail is kept). The worker renders it once the attempt ended,
 * redacting a sensitive node's values, and reports it with the outcome.
 */
export class AttemptLog {
  private readonly entries: LogEntry[] = [];

  /** Appends one line (without its newline). */
  line(text: string): void {
    this.entries.push({ text: text.endsWith('\n') ? text : `${text}\n`, cutBytes: 0 });
  }

  /** Appends a process's kept output: `text` (its tail), after `cutBytes` bytes that were not kept. */
  output(text: string, cutBytes: number): void {
    if (text === '' && cutBytes === 0) return;
    this.entries.push({ text, cutBytes });
  }

  /** True when nothing was recorded. */
  get empty(): boolean {
    return this.entries.length === 0;
  }

  /**
   * The log text: each entry in order, an output that was cut preceded by its marker line
   * (`… 983,040 bytes cut …`). `redact(text, cutAtStart)` sees each entry's text (`cutAtStart`:
   * it begins where the cut ended, possibly inside a value) and returns what is shown.
   */
  render(redact: (text: string, cutAtStart: boolean) => string = (t) => t): string {
    let out = '';
    for (const e of this.entries) {
      if (e.cutBytes > 0) out += `${cutMarker(e.cutBytes)}\n`;
      out += redact(e.text, e.cutBytes > 0);
    }
    return out;
  }
}

interface LogEntry {
  text: string;
  cutBytes: number;
}

/** The line that stands for `bytes` bytes of output not kept: `… 983,040 bytes cut …`. */
export function cutMarker(bytes: number): string {
  return `… ${bytes.toLocaleString('en-US')} bytes cut …`;
}
