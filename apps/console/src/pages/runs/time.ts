/** Times and durations as the runs pages show them (local time; the full ISO instant in a title). */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `2025-03-04 13:05:09` in local time; `—` for no time, the text itself when it is not a date. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${localDate(d)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * Like {@link formatTime}, without the date when it is the same local day as `now` (`13:05:09`),
 * for tables where every row is from today.
 */
export function formatTimeShort(iso: string | null | undefined, now: Date = new Date()): string {
  const full = formatTime(iso);
  const today = localDate(now);
  return full.startsWith(`${today} `) ? full.slice(today.length + 1) : full;
}

/**
 * A duration in words a reader takes in at a glance: `850 ms`, `12.3 s`, `4 min 05 s`,
 * `2 h 03 min`, `3 d 4 h`. Negative durations (clock skew) show as `0 ms`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${(Math.floor(s * 10) / 10).toFixed(1)} s`;
  const total = Math.floor(s);
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${pad(minutes)} min`;
  return `${minutes} min ${pad(seconds)} s`;
}

/** How long a run (or task) took from creation to its end; null while it has not finished. */
export function elapsed(from: string, to: string | null | undefined): number | null {
  if (!to) return null;
  const a = Date.parse(from);
  const b = Date.parse(to);
  if (Number.isNaN(a) || Number.isNaN(b)) return null;
  return b - a;
}

/** An ISO instant as a `datetime-local` input's value (`2025-03-04T13:05`, local time); '' when absent or not a date. */
export function isoToLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const seconds = d.getSeconds() ? `:${pad(d.getSeconds())}` : '';
  return `${localDate(d)}T${pad(d.getHours())}:${pad(d.getMinutes())}${seconds}`;
}

/** A `datetime-local` input's value (local time) as an ISO instant; null when empty or not a date. */
export function localInputToIso(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hours, minutes, seconds] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  const d = new Date(year, month - 1, day, hours, minutes, seconds);
  // new Date rolls 2025-02-30 over to March: such a value is not a date.
  if (d.getFullYear() !== year || d.getMonth() !== month - 1 || d.getDate() !== day) return null;
  return d.toISOString();
}

function localDate(d: Date): string {
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
