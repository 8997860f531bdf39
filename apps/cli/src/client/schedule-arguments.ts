import { InvalidArgumentError, type Command } from 'commander';
import { UPCOMING_MAX } from '@weft/contract';
import { usageError } from '../exit-codes.js';
import { isRfc3339, lengthMs } from './arguments.js';

/** The overlap policies `--overlap` takes, as the CLI writes them (the API's enum in lower case). */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'];

/** An overlap policy in any case (`buffer_one`, `BUFFER_ONE`), as the CLI writes it. */
export function overlapPolicy(v: string): string {
  const lower = v.trim().toLowerCase();
  if (!OVERLAP_POLICIES.includes(lower)) throw new InvalidArgumentError(`must be one of ${OVERLAP_POLICIES.join(', ')}`);
  return lower;
}

/**
 * The parser of a length of time in whole seconds (`--every`, `--jitter`, `--catch-up`):
 * numbers with a unit `s`, `m`, `h` or `d`, several in a row (`30s`, `5m`, `1h30m`, `1d`), or `0`
 * when `min` is 0.
 * @throws InvalidArgumentError naming `label` for anything else, or a length under `min` seconds.
 */
export function seconds(label: string, min: 0 | 1) {
  return (v: string): number => {
    const ms = v.trim() === '0' ? 0 : lengthMs(v);
    if (ms === undefined) throw new InvalidArgumentError(`${label} must be a length of time: 30s, 5m, 1h, 1h30m, 1d`);
    if (ms / 1000 < min) throw new InvalidArgumentError(`${label} must be at least 1s`);
    return ms / 1000;
  };
}

/** A number of seconds as the flags take it: `30s`, `5m`, `1h30m`, `1d`, `0s`. */
export function lengthText(totalSeconds: number): string {
  if (totalSeconds <= 0) return '0s';
  const parts: string[] = [];
  let rest = totalSeconds;
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.join('');
}

/** The parser of an instant option (`--start`, `--end`, `--from`, `--to`): RFC 3339 with an offset, kept as written. */
export function instant(label: string) {
  return (v: string): string => {
    if (!isRfc3339(v))
      throw new InvalidArgumentError(`${label} must be an RFC 3339 time with an offset, e.g. 2030-01-01T00:00:00Z or 2030-01-01T09:00:00+05:30`);
    return v.trim();
  };
}

/** `--tz`: an IANA time zone this machine knows (`Europe/Paris`, `UTC`). */
export function timeZone(v: string): string {
  const zone = v.trim();
  try {
    if (zone === '') throw new RangeError('empty');
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new InvalidArgumentError('--tz must be an IANA time zone: Area/City (Europe/Paris, America/New_York) or UTC');
  }
  return zone;
}

/** `--upcoming`: how many fire times `describe` shows, 1 to {@link UPCOMING_MAX}. */
export function upcomingCount(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < 1 || n > UPCOMING_MAX) throw new InvalidArgumentError(`--upcoming must be a whole number from 1 to ${UPCOMING_MAX}`);
  return n;
}

/** The timing flags of `schedules create`, parsed. */
export interface TimingFlags {
  cron?: string;
  every?: number;
  tz?: string;
  start?: string;
  end?: string;
  jitter?: number;
  catchUp?: number;
  note?: string;
}

/** The flag of `schedules create` that sets each field of the API's CreateScheduleInput. */
const FLAG_OF: Record<string, string> = {
  cron: '--cron',
  intervalSeconds: '--every',
  timeZone: '--tz',
  startAt: '--start',
  endAt: '--end',
  jitterSeconds: '--jitter',
  catchUpSeconds: '--catch-up',
  note: '--note',
};

/**
 * Checks the timing flags of `schedules create` as the API would, with the engine's own checks
 * (croner reads the cron expression in the zone), before any request; a problem ends the command
 * with a usage error naming its flag.
 */
export async function checkTiming(cmd: Command, o: TimingFlags): Promise<void> {
  if ((o.cron === undefined) === (o.every === undefined))
    usageError(cmd, o.cron === undefined ? 'give --cron EXPR or --every LENGTH (30s, 5m, 1h)' : 'give --cron or --every, not both');
  if (o.every !== undefined && o.tz !== undefined) usageError(cmd, '--tz applies to --cron only: an --every interval counts seconds, whatever the zone');
  const engine = await import('./engine-side.js');
  const problems = [
    ...engine.scheduleTimingProblems({
      cron: o.cron ?? null,
      intervalSeconds: o.every ?? null,
      timeZone: o.tz ?? 'UTC',
      startAt: o.start ? new Date(o.start) : null,
      endAt: o.end ? new Date(o.end) : null,
    }),
  ];
  // The parsers took whole seconds, at least 0: only the largest values are left to check.
  if (o.jitter !== undefined && o.jitter > engine.MAX_JITTER_SECONDS)
    problems.push({ path: 'jitterSeconds', message: `must be at most ${lengthText(engine.MAX_JITTER_SECONDS)}` });
  if (o.catchUp !== undefined && o.catchUp > engine.MAX_CATCH_UP_SECONDS)
    problems.push({ path: 'catchUpSeconds', message: `must be at most ${lengthText(engine.MAX_CATCH_UP_SECONDS)}` });
  const p = problems[0];
  if (!p) return checkNote(cmd, o.note);
  const flag = FLAG_OF[p.path] ?? p.path;
  // The engine names fields as the API does: say them as the flags that set them.
  const message = p.message.replace(/\bstartAt\b/g, '--start').replace(/\bcron or intervalSeconds\b/g, '--cron or --every');
  usageError(cmd, flag === '--cron' ? `--cron ${JSON.stringify(o.cron)}: ${message}` : `${flag} ${message}`);
}

/** Ends `cmd` with a usage error when `--note` is longer than the API takes. */
export async function checkNote(cmd: Command, note: string | undefined): Promise<void> {
  const { MAX_SCHEDULE_NOTE_CHARS } = await import('./engine-side.js');
  if (note !== undefined && note.length > MAX_SCHEDULE_NOTE_CHARS)
    usageError(cmd, `--note must be at most ${MAX_SCHEDULE_NOTE_CHARS} characters (it has ${note.length})`);
}
