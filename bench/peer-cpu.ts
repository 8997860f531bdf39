/**
 * CPU time by group of processes between two readings of /proc/<pid>/stat (utime + stime, every
 * thread of the process included): a group is a name and the pids it has at the moment of each
 * reading, e.g. "postgres" with the database's backends and PostgreSQL's background processes.
 */
import { cpuSeconds } from './stats.js';

/** Process groups by name: the pids each has now. */
export type ProcessGroups = Map<string, number[]>;

/** One reading: CPU seconds so far per pid, by group. */
export type CpuReading = Map<string, Map<number, number>>;

/** Reads the CPU time of every pid of every group now (a pid that is gone is left out). */
export function readCpu(groups: ProcessGroups): CpuReading {
  const out: CpuReading = new Map();
  for (const [name, pids] of groups) {
    const per = new Map<number, number>();
    for (const pid of pids) {
      const s = cpuSeconds(pid);
      if (s !== undefined) per.set(pid, s);
    }
    out.set(name, per);
  }
  return out;
}

/**
 * CPU seconds per group between readings `a` and `b`, in the order of `b`. A pid that only `b`
 * has appeared in between and spent all its CPU there; one that only `a` has ended in between,
 * and what it spent after `a` is lost (the groups' processes live across the window).
 */
export function cpuBetween(a: CpuReading, b: CpuReading): [string, number][] {
  return [...b].map(([name, per]) => {
    const before = a.get(name) ?? new Map<number, number>();
    let sum = 0;
    for (const [pid, s] of per) sum += Math.max(0, s - (before.get(pid) ?? 0));
    return [name, sum];
  });
}
