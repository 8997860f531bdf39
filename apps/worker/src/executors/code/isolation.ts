import { accessSync, constants as fsConstants, realpathSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { runProcess } from './child.js';
import { Cgroups } from './cgroup.js';
import { MAX_OPEN_FILES, type CodeLimits } from './limits.js';
import { createExecutionFiles, launchCommand, type ExecutionFiles, type SandboxTools } from './sandbox.js';
import type { UidRange } from './uid-pool.js';

/** What isolation a worker's CODE executions get; found once, at start. */
export interface CodeIsolation {
  /** Every part below is in place: the worker runs CODE. */
  confined: boolean;
  /** The parts that hold, one short name each (`bubblewrap`, `a uid per execution`, …), for the start-up line. */
  parts: string[];
  /** The parts that hold, one sentence each, for the start-up log at debug. */
  holds: string[];
  /** The parts that cannot be applied, one sentence each (empty when confined). */
  missing: string[];
  /** What to do about `missing`. */
  remedy: string;
  /** The tools the command line is built from (bwrap only when the probe ran in it). */
  tools: SandboxTools;
  /** The execution cgroups, when the worker may create them. */
  cgroups: Cgroups | undefined;
  /** Where this worker's execution folders live (root-owned, 0711; removed at start and at exit). */
  blockDir: string;
}

export interface IsolationProbe {
  blockDir: string;
  uidRange: UidRange | undefined;
  cgroups: Cgroups | string;
  bwrap: string | undefined;
  prlimit: string | undefined;
  setpriv: string | undefined;
  node: string;
  /** The seccomp filter file, or undefined when there is none for this architecture. */
  seccomp: string | undefined;
}

const REMEDY =
  'Run the worker as root with bubblewrap (Debian package bubblewrap) and util-linux on PATH and a writable cgroup v1 or v2 memory and pids controller, or start it with WEFT_CODE_UNCONFINED=1 for local development';

/**
 * Checks each part of CODE isolation by use: bubblewrap by running the worker's Node in the real
 * sandbox (as the block's first uid, in a cgroup when there is one), the cgroups by creating one,
 * the uid switch by being root. A part that fails is left out of the command line and named in
 * `missing`.
 */
export async function detectIsolation(probe: IsolationProbe): Promise<CodeIsolation> {
  const holds: string[] = [];
  const parts: string[] = [];
  const missing: string[] = [];
  const cgroups = probe.cgroups instanceof Cgroups ? probe.cgroups : undefined;
  if (probe.uidRange) parts.push('a uid per execution');
  if (probe.uidRange) holds.push(`a uid of its own per execution (${probe.uidRange.base}…${probe.uidRange.base + probe.uidRange.size - 1})`);
  else missing.push('the worker is not root, so executions cannot run as uids of their own');
  if (cgroups) parts.push('cgroup memory and process limits');
  if (cgroups) holds.push(`memory and process limits for all of an execution's processes (${cgroups.describe()})`);
  else missing.push(`no per-execution cgroup: ${probe.cgroups as string}`);
  if (probe.prlimit) parts.push('rlimits');
  if (probe.prlimit) holds.push('file size, CPU time and process count rlimits (prlimit)');
  else missing.push('prlimit (util-linux) is not on PATH: no file size or CPU time limit');
  let bwrap = probe.bwrap;
  if (!probe.seccomp)
    missing.push(`no seccomp filter for the ${process.arch} architecture: keyrings, user namespaces, io_uring and every socket family stay open to CODE`);
  if (!bwrap) missing.push('bubblewrap (bwrap) is not on PATH: no pid, mount and network namespaces, nothing stops processes outliving the attempt');
  else if (probe.uidRange && !probe.setpriv) {
    missing.push('setpriv (util-linux) is not on PATH: the sandbox cannot drop to the execution uid');
    bwrap = undefined;
  } else {
    const problem = await tryBwrap({ bwrap, setpriv: probe.setpriv, prlimit: probe.prlimit, seccomp: probe.seccomp }, probe, cgroups);
    if (problem) {
      missing.push(`bubblewrap cannot build the sandbox: ${problem}`);
      bwrap = undefined;
    } else {
      parts.unshift(probe.seccomp ? 'bubblewrap with seccomp' : 'bubblewrap');
      holds.push(
        `bubblewrap: own pid, mount, network, IPC and UTS namespaces, --die-with-parent, private size-capped /tmp and /dev/shm, no network${probe.seccomp ? ', a seccomp filter (no keyrings, user namespaces, io_uring, userfaultfd, BPF or perf events; sockets of the Unix, IPv4 and IPv6 families only)' : ''}`,
      );
    }
  }
  return {
    confined: missing.length === 0,
    parts,
    holds,
    missing,
    remedy: REMEDY,
    tools: { bwrap, setpriv: probe.setpriv, prlimit: probe.prlimit, seccomp: probe.seccomp },
    cgroups,
    blockDir: probe.blockDir,
  };
}

/** Runs `node -e ''` in the sandbox as the executions would; the reason it failed, or undefined. */
async function tryBwrap(tools: SandboxTools, probe: IsolationProbe, cgroups: Cgroups | undefined): Promise<string | undefined> {
  const runAs = probe.uidRange ? { uid: probe.uidRange.base, gid: probe.uidRange.base } : undefined;
  const limits: CodeLimits = {
    seconds: 20,
    memoryMb: 256,
    maxProcesses: 128,
    maxFileBytes: 1024,
    maxOpenFiles: MAX_OPEN_FILES,
    cpuSeconds: 25,
    scratchBytes: 1024 * 1024,
  };
  const cgroup = await cgroups?.create(`weft-probe-${process.pid}-bwrap`, { memoryBytes: 256 * 1024 * 1024, maxProcesses: 128 }).catch(() => undefined);
  let files: ExecutionFiles | undefined;
  try {
    files = await createExecutionFiles(probe.blockDir, runAs, {});
    const launch = launchCommand(tools, [probe.node, '-e', ''], {}, files, limits, runAs, cgroup?.procsFiles ?? []);
    const outcome = await runProcess(launch, 20, undefined, 4096);
    if (outcome.exitCode === 0) return undefined;
    const how = outcome.timedOut ? 'it timed out' : outcome.exitCode !== null ? `exit code ${outcome.exitCode}` : `signal ${outcome.signal}`;
    return `${how}${outcome.stderr.trim() ? `: ${outcome.stderr.trim().slice(0, 300)}` : ''}`;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await cgroup?.destroy();
    if (files) await rm(files.dir, { recursive: true, force: true });
  }
}

/**
 * The first `name` on PATH (or `name` itself when it holds a slash) that `usable` accepts — by
 * default one this process may execute — as `usable` returns it; undefined when none does.
 */
export function findOnPath(name: string, usable: (file: string) => string | undefined = executable): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    const file = usable(candidate);
    if (file) return file;
  }
  return undefined;
}

/** `file` when this process may execute it. */
function executable(file: string): string | undefined {
  try {
    accessSync(file, fsConstants.X_OK);
    return file;
  } catch {
    return undefined; // not here
  }
}

/**
 * The real path of `file` when any user may execute it: the others-execute bit on the file and
 * the others-search bit on every folder above it (a version manager's shim under /root fails).
 */
export function executableByAnyone(file: string): string | undefined {
  try {
    const real = realpathSync(file);
    if ((statSync(real).mode & 0o001) === 0) return undefined;
    for (let dir = dirname(real); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return undefined;
      if (dirname(dir) === dir) return real;
    }
  } catch {
    return undefined; // not there
  }
}
