import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { ExecutionError } from '../executor.js';

/**
 * What the runner writes to the result file: the result, or why there is none (`retryable: false`:
 * the code raised a non-retryable error).
 */
export type Envelope =
  { ok: true; result: unknown } | { ok: false; kind: 'no_handler' | 'syntax' | 'exception' | 'not_json'; message: string; retryable?: boolean };

/** How the result file of an execution may be read. */
export interface ResultFileRules {
  /** The uid that must own it: the execution's (or the worker's own when it has none). */
  ownerUid: number | undefined;
  /** Largest size read, bytes; more is OUTPUT_TOO_LARGE. */
  maxBytes: number;
}

/**
 * Reads the runner's result file without trusting it: opened with O_NOFOLLOW (a symlink to
 * `/etc/shadow` fails instead of being read as root) and O_NONBLOCK (a FIFO cannot hold a worker
 * thread), accepted only when it is a regular file owned by `ownerUid` (not `/dev/zero`, a device
 * or a hard link to someone else's file) of at most `maxBytes`, and read with a bound even if it
 * grows meanwhile.
 *
 * @returns the file's text, or undefined when there is no file (the code never got to write it)
 * @throws ExecutionError (retryable) naming what is wrong with the file; OUTPUT_TOO_LARGE over the cap
 */
export async function readResultFile(file: string, rules: ResultFileRules): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new ExecutionError('the result file was replaced by a symbolic link; it is not read');
    throw new ExecutionError(`the result file cannot be opened (${code ?? (err as Error).message})`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ExecutionError(`the result file was replaced by ${kindOf(info)}; it is not read`);
    if (rules.ownerUid !== undefined && info.uid !== rules.ownerUid) {
      throw new ExecutionError(`the result file belongs to uid ${info.uid}, not the execution's ${rules.ownerUid}; it is not read`);
    }
    if (info.nlink > 1) throw new ExecutionError('the result file has other hard links; it is not read');
    if (info.size > rules.maxBytes) throw tooLarge(rules.maxBytes);
    const buffer = Buffer.alloc(Math.min(info.size, rules.maxBytes) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) {
        if (length > rules.maxBytes) throw tooLarge(rules.maxBytes);
        break; // it grew after fstat, within the cap: what was there then is the result
      }
    }
    return buffer.subarray(0, Math.min(length, info.size)).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The runner's envelope from the result file's text, or null when there is none (no file or —
 * after an unclean exit — a partly written one: the caller reports the crash). After a clean exit
 * a text that is not JSON can only be the code's doing.
 *
 * @throws ExecutionError when a clean exit left a text that is not JSON
 */
export function parseEnvelope(text: string | undefined, cleanExit: boolean): Envelope | null {
  if (text === undefined) return null;
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch (err) {
    if (!cleanExit) return null;
    throw new ExecutionError(`the result is not valid JSON: ${(err as Error).message}`);
  }
  return typeof envelope === 'object' && envelope !== null && 'ok' in envelope ? (envelope as Envelope) : null;
}

function tooLarge(maxBytes: number): ExecutionError {
  return new ExecutionError(`the result exceeds ${maxBytes} bytes (OUTPUT_TOO_LARGE)`, true, 'output_too_large');
}

function kindOf(info: { isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isDirectory(): boolean; isSocket(): boolean }): string {
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isDirectory()) return 'a directory';
  if (info.isSocket()) return 'a socket';
  return 'something that is not a regular file';
}
