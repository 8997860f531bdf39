import { CODE_MEMORY_MB, MAX_DURATION_SECONDS } from '@weft/engine';
import { ExecutionError } from '../executor.js';

/** The limits of one CODE execution, from its resolved spec and the worker's settings. */
export interface CodeLimits {
  /** Wall-clock limit, seconds (`spec.timeout_seconds`, default 30, at most 365 days). */
  seconds: number;
  /** Memory of all the execution's processes together, MiB (`spec.memory_mb`, default 256, 16…4096). */
  memoryMb: number;
  /** Processes and threads the execution may hold at once (cgroup `pids.max` and RLIMIT_NPROC). */
  maxProcesses: number;
  /** Largest file the execution may write, bytes (RLIMIT_FSIZE): its result included. */
  maxFileBytes: number;
  /** Open files of each process (RLIMIT_NOFILE, {@link openFilesPerProcess}): times `maxProcesses`, the most the execution holds. */
  maxOpenFiles: number;
  /** CPU time of each process, seconds (RLIMIT_CPU): the wall-clock limit plus a grace. */
  cpuSeconds: number;
  /** Size of each of its private `/tmp`, `/dev/shm` and working directory, bytes: a quarter of the memory, which their pages also count toward. */
  scratchBytes: number;
  /** RLIMIT_DATA of each process, bytes, where no cgroup holds the execution's memory (a Node runtime's Buffers). */
  dataBytes?: number;
}

/** The worker-wide part of {@link CodeLimits}. */
export interface WorkerCodeLimits {
  maxProcesses: number;
  maxFileBytes: number;
}

export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_MEMORY_MB = 256;
/** Default `pids.max`: a Node runtime alone holds about 20 threads. */
export const DEFAULT_MAX_PROCESSES = 128;
/**
 * Open files one execution may hold in all its processes together. The kernel has no per-cgroup
 * limit on open files: RLIMIT_NOFILE is per process (threads share their process's table), so the
 * execution's total is bounded by RLIMIT_NOFILE × `pids.max` ({@link openFilesPerProcess}).
 */
export const MAX_OPEN_FILES_PER_EXECUTION = 32_768;
/** The most RLIMIT_NOFILE of a process of an execution (what a handler gets at the default 128 processes). */
export const MAX_OPEN_FILES = 256;
/** The least RLIMIT_NOFILE: a Node runtime opens about 20 files at start. */
export const MIN_OPEN_FILES = 64;
/** The most memory a worker's CODE executions hold together, when not configured: this share of the host's memory. */
export const DEFAULT_TOTAL_MEMORY_SHARE = 0.5;
/** RLIMIT_CPU beyond the wall-clock limit: the runtime's start-up and the watchdog's own grace. */
const CPU_GRACE_SECONDS = 5;

/**
 * Checks the limits in a CODE spec after its templates were resolved, with the same bounds that
 * publishing applies to literal values: a templated `memory_mb: "{{input.mem}}"` resolving to
 * 1,000,000 fails the attempt for good instead of lifting the cap.
 *
 * @param spec the resolved spec (its `timeout_seconds` and `memory_mb`, numbers or numeric strings)
 * @throws ExecutionError (not retryable) naming the field, the value and the bound
 */
export function codeLimits(spec: { timeout_seconds?: unknown; memory_mb?: unknown }, worker: WorkerCodeLimits): CodeLimits {
  const seconds = numberIn(spec.timeout_seconds, DEFAULT_TIMEOUT_SECONDS, 'spec.timeout_seconds', 'seconds', 0, MAX_DURATION_SECONDS, true);
  const memoryMb = Math.ceil(numberIn(spec.memory_mb, DEFAULT_MEMORY_MB, 'spec.memory_mb', 'MB', CODE_MEMORY_MB.min, CODE_MEMORY_MB.max, false));
  return {
    seconds,
    memoryMb,
    maxProcesses: worker.maxProcesses,
    maxFileBytes: worker.maxFileBytes,
    maxOpenFiles: openFilesPerProcess(worker.maxProcesses),
    cpuSeconds: Math.ceil(seconds) + CPU_GRACE_SECONDS,
    scratchBytes: Math.floor((memoryMb * 1024 * 1024) / 4),
  };
}

/**
 * RLIMIT_NOFILE of each process of an execution that may hold `maxProcesses` processes: its share
 * of {@link MAX_OPEN_FILES_PER_EXECUTION}, within {@link MIN_OPEN_FILES}…{@link MAX_OPEN_FILES}.
 * At the default 128 processes: 256 files each, 32,768 for the execution; above 512 processes
 * each keeps 64, and the execution's bound is 64 × `maxProcesses`.
 */
export function openFilesPerProcess(maxProcesses: number): number {
  return Math.min(MAX_OPEN_FILES, Math.max(MIN_OPEN_FILES, Math.floor(MAX_OPEN_FILES_PER_EXECUTION / maxProcesses)));
}

/**
 * The memory all of a worker's CODE executions may hold together, MiB: `configured` when given,
 * else {@link DEFAULT_TOTAL_MEMORY_SHARE} of `hostBytes` (the host's memory), and never below the
 * largest `memory_mb` one execution may ask for, so that a worker on a small host still runs one
 * of any size at a time.
 */
export function totalMemoryMb(configured: number | undefined, hostBytes: number): number {
  if (configured !== undefined) return configured;
  return Math.max(CODE_MEMORY_MB.max, Math.floor((hostBytes * DEFAULT_TOTAL_MEMORY_SHARE) / (1024 * 1024)));
}

function numberIn(value: unknown, fallback: number, name: string, unit: string, min: number, max: number, exclusiveMin: boolean): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    throw invalid(`${name} must be a number, got ${describe(value)}`);
  }
  if (exclusiveMin ? n <= min : n < min) {
    throw invalid(`${name} must be ${exclusiveMin ? `a positive number` : `at least ${min} ${unit}`}, got ${n}`);
  }
  if (n > max) throw invalid(`${name} ${n} is over the limit of ${max} ${unit}`);
  return n;
}

function describe(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** A spec that can never work: not retryable. */
export function invalid(message: string): ExecutionError {
  return new ExecutionError(`invalid CODE spec: ${message}`, false);
}
