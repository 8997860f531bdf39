/**
 * The fault schedule and its injection.
 *
 * The schedule is a seeded sequence: the first faults are the kinds in a seeded order, one each
 * (so every run of the tool exercises each kind at least once when it lasts long enough),
 * then kinds are drawn with {@link WEIGHTS}; gaps are exponential with mean `meanGapMs`
 * (clamped to 0.3×–3× the mean); each kill carries its target replica and its restart delay.
 * Which fault comes n-th and its parameters depend on the seed only; *when* it lands relative
 * to the runs depends on machine speed.
 */
import type { Pool } from 'pg';
import type { Redis } from 'ioredis';
import { Rng } from './rng.js';
import { codeDescendants, stillRunning, type HostProcess, type WeftProcess } from './processes.js';
import { commitInFlight, stillActive } from './commit-watch.js';

export const FAULT_KINDS = ['worker-kill', 'worker-pause', 'scheduler-kill', 'api-kill', 'redis-flush', 'pg-terminate', 'worker-kill-commit'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const WEIGHTS: Record<FaultKind, number> = {
  'worker-kill': 27,
  'worker-pause': 6,
  'scheduler-kill': 20,
  'api-kill': 8,
  'redis-flush': 14,
  'pg-terminate': 25,
  'worker-kill-commit': 12,
};

/** How long a `worker-kill-commit` looks for a committer message in flight before giving up, ms. */
export const COMMIT_WATCH_MS = 3_000;

/** True for the faults that SIGKILL a worker. */
export const killsWorker = (kind: FaultKind): boolean => kind === 'worker-kill' || kind === 'worker-kill-commit';

export interface PlannedFault {
  kind: FaultKind;
  /** Gap since the previous fault, ms. */
  gapMs: number;
  /** Replica index for kills (0 or 1). */
  target: number;
  /** Restart delay for kills, ms. */
  restartMs: number;
  /** How long a paused worker stays stopped, ms: 1.3–2× `pauseBaseMs`. */
  pauseMs: number;
}

export class FaultPlanner {
  private readonly rng: Rng;
  private readonly first: FaultKind[];
  private n = 0;

  constructor(
    seed: number,
    private readonly meanGapMs: number,
    /** The longer of the run lease and the job lock: a pause beyond it makes the worker's executions stale. */
    private readonly pauseBaseMs: number,
    /** The kinds to draw from (`--fault-kinds`); all by default. */
    kinds: readonly FaultKind[] = FAULT_KINDS,
  ) {
    this.rng = new Rng(seed, 'faults');
    this.first = this.rng.shuffle(kinds);
    this.weights = Object.fromEntries(kinds.map((k) => [k, WEIGHTS[k]])) as Record<FaultKind, number>;
  }

  private readonly weights: Record<FaultKind, number>;

  next(): PlannedFault {
    const kind = this.n < this.first.length ? this.first[this.n] : this.rng.weighted(this.weights);
    this.n++;
    const gapMs = Math.min(3 * this.meanGapMs, Math.max(0.3 * this.meanGapMs, this.rng.exp(this.meanGapMs)));
    return {
      kind,
      gapMs: Math.round(gapMs),
      target: this.rng.int(0, 1),
      restartMs: Math.round(this.rng.between(300, 3000)),
      pauseMs: Math.round(this.rng.between(1.3, 2) * this.pauseBaseMs),
    };
  }
}

/**
 * A moment an execution can have been lost at. It can explain one extra stub hit of a task whose
 * hits span it: `at` in [first hit - `leadMs`, last hit + 0.5 s]. `leadMs` is how long before
 * its HTTP call an execution can already be exposed: a killed or paused worker's request may
 * reach the stub just after the signal (0.5 s); a job lost with Redis while its execution was
 * already running (claiming its lease) still makes its call afterwards (3 s).
 */
export interface RedeliveryEvent {
  at: number;
  leadMs: number;
  what: string;
}

export interface FaultRecord {
  at: number;
  kind: FaultKind;
  detail: string;
  /** For a worker pause: how long it lasted, ms. */
  pauseMs?: number;
  /** False when nothing could be done (e.g. both replicas already down). */
  applied: boolean;
  /** For a worker kill: its CODE executions' processes (uid from its block) just before the SIGKILL. */
  codeProcesses?: HostProcess[];
  /** For a worker kill: those of {@link codeProcesses} still running {@link SURVIVOR_CHECK_MS} after it. */
  codeSurvivors?: HostProcess[];
}

/**
 * When a killed worker's CODE processes are looked for again: bubblewrap's `--die-with-parent`
 * kills them with the worker, and a restarted worker's sweep of its uid block (which would hide
 * survivors) cannot have run yet — its restart comes 0.3 s after the kill at the earliest.
 */
export const SURVIVOR_CHECK_MS = 250;

export interface FaultTargets {
  workers: WeftProcess[];
  schedulers: WeftProcess[];
  api: WeftProcess;
  owner: Pool;
  redis: Redis;
  dbName: string;
  flushAll: boolean;
}

/** Applies faults and keeps the log. */
const FLUSH_SCRIPT = `
local keys = redis.call('KEYS', ARGV[1])
local n = 0
for i = 1, #keys, 500 do
  n = n + redis.call('DEL', unpack(keys, i, math.min(i + 499, #keys)))
end
return n`;

export class FaultInjector {
  readonly log: FaultRecord[] = [];
  terminatedBackends = 0;
  /** Survivor checks of worker kills still to come. */
  private readonly checks: Promise<void>[] = [];
  deletedRedisKeys = 0;

  constructor(
    private readonly t: FaultTargets,
    private readonly clock: () => number,
    private readonly onFault: (r: FaultRecord) => void = () => {},
  ) {}

  count(kind: FaultKind): number {
    return this.log.filter((r) => r.kind === kind && r.applied).length;
  }

  /**
   * The moments at which an applied fault can have lost an execution that already made (or was
   * about to make) its HTTP call, so that the same attempt runs again (see {@link RedeliveryEvent}).
   */
  redeliveryEvents(): RedeliveryEvent[] {
    const events: RedeliveryEvent[] = [];
    for (const r of this.log) {
      if (!r.applied) continue;
      if (killsWorker(r.kind)) events.push({ at: r.at, leadMs: 500, what: 'worker kill' });
      if (r.kind === 'redis-flush') events.push({ at: r.at, leadMs: 3_000, what: 'Redis loss' });
      if (r.kind === 'worker-pause') {
        events.push({ at: r.at, leadMs: 500, what: 'worker pause' });
        events.push({ at: r.at + (r.pauseMs ?? 0), leadMs: 500, what: 'worker resume' });
      }
    }
    return events;
  }

  async apply(f: PlannedFault): Promise<FaultRecord> {
    const at = this.clock();
    let rec: FaultRecord;
    try {
      // A fault that waits for its moment (a commit in flight) says when it struck.
      rec = { at, kind: f.kind, ...(await this.do(f)) };
    } catch (err) {
      rec = { at, kind: f.kind, applied: false, detail: `error: ${(err as Error).message}` };
    }
    this.log.push(rec);
    this.onFault(rec);
    const killed = rec.codeProcesses;
    if (killed?.length) {
      this.checks.push(
        new Promise<void>((resolve) => setTimeout(resolve, SURVIVOR_CHECK_MS)).then(() => {
          rec.codeSurvivors = stillRunning(killed);
        }),
      );
    }
    return rec;
  }

  /** Resolves once every worker kill's survivor check ran. */
  async settled(): Promise<void> {
    await Promise.all(this.checks);
  }

  private async do(f: PlannedFault): Promise<{ at?: number; applied: boolean; detail: string; pauseMs?: number; codeProcesses?: HostProcess[] }> {
    switch (f.kind) {
      case 'worker-kill':
        return this.kill(this.t.workers, f);
      case 'worker-kill-commit':
        return this.killInCommit(f);
      case 'worker-pause': {
        const order = [this.t.workers[f.target % this.t.workers.length], ...this.t.workers.filter((_, i) => i !== f.target % this.t.workers.length)];
        const victim = order.find((p) => p.running && !p.paused);
        if (!victim) return { applied: false, detail: 'every worker already down or paused' };
        const pid = victim.pause(f.pauseMs);
        return { applied: true, detail: `SIGSTOP ${victim.name} (pid ${pid}) for ${f.pauseMs} ms, then SIGCONT`, pauseMs: f.pauseMs };
      }
      case 'scheduler-kill':
        return this.kill(this.t.schedulers, f);
      case 'api-kill':
        return this.kill([this.t.api], { ...f, target: 0 });
      case 'redis-flush':
        return this.flush();
      case 'pg-terminate': {
        const r = await this.t.owner.query(
          `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name LIKE 'weft%'`,
          [this.t.dbName],
        );
        const n = r.rows[0].n as number;
        this.terminatedBackends += n;
        return { applied: true, detail: `terminated ${n} backends` };
      }
    }
  }

  /**
   * SIGKILLs replica `target` (the other one if it is down or paused), restarting it after
   * `restartMs`. For a worker, the CODE processes below it are listed first (just before the kill).
   */
  private kill(group: WeftProcess[], f: PlannedFault): { applied: boolean; detail: string; codeProcesses?: HostProcess[] } {
    const order = [group[f.target % group.length], ...group.filter((_, i) => i !== f.target % group.length)];
    // A paused worker is left to wake up (its late reports are what the pause is for).
    const victim = order.find((p) => p.running && !p.paused) ?? order.find((p) => p.running);
    if (!victim) return { applied: false, detail: `every replica already down` };
    const code = group === this.t.workers && victim.pid !== undefined ? codeDescendants(victim.pid) : undefined;
    const pid = victim.kill();
    victim.restartAfter(f.restartMs);
    const running = code === undefined ? '' : ` with ${code.length} CODE process${code.length === 1 ? '' : 'es'} running`;
    return { applied: true, detail: `SIGKILL ${victim.name} (pid ${pid})${running}, restart in ${f.restartMs} ms`, codeProcesses: code };
  }

  /**
   * SIGKILLs the worker whose step committer has a message running in PostgreSQL (a batch of
   * fenced reports, each of which may also take its worker's next attempt), restarting it after
   * `restartMs`: the message commits or not without its sender, which never learns which. Its
   * reports' jobs come back when their locks lapse and attempts taken in it are left RUNNING under
   * a lease nobody renews; the run must still end as planned, with no step lost or done twice.
   * Not applied when no committer message was seen within {@link COMMIT_WATCH_MS}.
   */
  private async killInCommit(f: PlannedFault): Promise<{ at?: number; applied: boolean; detail: string; codeProcesses?: HostProcess[] }> {
    const seen = await commitInFlight(this.t.owner, this.t.dbName, this.t.workers, this.clock, this.clock() + COMMIT_WATCH_MS);
    if (!seen) return { applied: false, detail: `no committer message seen in flight within ${COMMIT_WATCH_MS} ms` };
    const victim = seen.worker;
    const code = victim.pid === undefined ? undefined : codeDescendants(victim.pid);
    const at = this.clock();
    const pid = victim.kill();
    victim.restartAfter(f.restartMs);
    const outlived = await stillActive(this.t.owner, seen.backendPid).catch(() => false);
    const running = code === undefined ? '' : `, ${code.length} CODE process${code.length === 1 ? '' : 'es'} running`;
    return {
      at,
      applied: true,
      detail: `SIGKILL ${victim.name} (pid ${pid}) with a committer message in flight (backend ${seen.backendPid}, ${seen.reports}+ reports, ${outlived ? 'still running after the kill' : 'over by the kill'}${running}), restart in ${f.restartMs} ms`,
      codeProcesses: code,
    };
  }

  /**
   * Loses this installation's Redis state: deletes every key under `weft:<db>:` (the Bull queues
   * of this database — jobs waiting, delayed, active, their locks), or FLUSHALL with --flushall.
   */
  private async flush(): Promise<{ applied: boolean; detail: string }> {
    if (this.t.flushAll) {
      await this.t.redis.flushall();
      return { applied: true, detail: 'FLUSHALL' };
    }
    // One Lua script, so the loss is instantaneous (no job can slip between a SCAN and a DEL).
    const deleted = (await this.t.redis.eval(FLUSH_SCRIPT, 0, `weft:${this.t.dbName}:*`)) as number;
    this.deletedRedisKeys += deleted;
    return { applied: true, detail: `deleted ${deleted} keys weft:${this.t.dbName}:*` };
  }
}
