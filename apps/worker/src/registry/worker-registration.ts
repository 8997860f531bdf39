import { hostname } from 'node:os';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { WorkerRegistryRepository, type WorkerIdentity } from '@weft/persistence';
import { WEFT_VERSION } from '@weft/platform';

/** Injection token of the optional {@link WorkerRegistrationOptions}. */
export const WORKER_REGISTRATION_OPTIONS = Symbol('WORKER_REGISTRATION_OPTIONS');

/** Tuning of {@link WorkerRegistration}; every field has a default. */
export interface WorkerRegistrationOptions {
  /** How often the worker heartbeats its row, ms (default 5 000); it counts as gone after three missed. */
  heartbeatMs?: number;
  /** How long a gone worker's row is kept before a live worker prunes it, ms (default one hour). */
  keepGoneMs?: number;
}

/** Heartbeats between two prunes of gone workers' rows (about a minute at the default interval). */
const PRUNE_EVERY = 12;

/**
 * This worker process in the worker registry (`workers`): registered when it starts consuming
 * (id UUIDv7, host, pid, version, queues, concurrency), heartbeated every `heartbeatMs` on the
 * database's clock, marked draining when it stops taking jobs, and deregistered when it stops
 * cleanly. A row whose heartbeats stopped (a killed worker) expires after three intervals and is
 * pruned by the live workers an hour later. A failed write is logged and tried again at the next
 * beat: the registry is for operators, never in the way of the work.
 */
@Injectable()
export class WorkerRegistration {
  private readonly log = new Logger('worker');
  private readonly repo: WorkerRegistryRepository;
  private readonly heartbeatMs: number;
  private readonly keepGoneMs: number;
  private identity: WorkerIdentity | undefined;
  private startedAt: Date | null = null;
  private timer: NodeJS.Timeout | undefined;
  private beats = 0;
  private beating: Promise<void> | undefined;

  constructor(ds: DataSource, @Optional() @Inject(WORKER_REGISTRATION_OPTIONS) options: WorkerRegistrationOptions | null = null) {
    this.repo = new WorkerRegistryRepository(ds);
    this.heartbeatMs = options?.heartbeatMs ?? 5_000;
    this.keepGoneMs = options?.keepGoneMs ?? 60 * 60 * 1000;
  }

  /** This worker's id once registered. */
  get id(): string | undefined {
    return this.identity?.id;
  }

  /** Registers this process as a worker of `queues` running `concurrency` jobs per queue, then heartbeats. */
  async register(queues: readonly string[], concurrency: number): Promise<void> {
    if (this.identity) return;
    this.identity = { id: uuidv7(), host: hostname(), pid: process.pid, version: WEFT_VERSION, queues: [...queues], concurrency };
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  /** Records that this worker began draining: it takes no more jobs. */
  async draining(): Promise<void> {
    if (!this.identity) return;
    await this.repo.markDraining(this.identity.id).catch((err: unknown) => this.warn('could not record the drain', err, false));
  }

  /** Stops heartbeating and removes this worker's row. */
  async deregister(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    const identity = this.identity;
    if (!identity) return;
    this.identity = undefined;
    await this.repo.deregister(identity.id).catch((err: unknown) => this.warn('could not deregister (the row expires by itself)', err, false));
  }

  private beat(): Promise<void> {
    if (this.beating || !this.identity) return this.beating ?? Promise.resolve();
    const identity = this.identity;
    this.beating = (async () => {
      try {
        const row = await this.repo.heartbeat(identity, this.heartbeatMs, this.startedAt);
        this.startedAt ??= row.startedAt;
        if (this.beats++ % PRUNE_EVERY === 0) await this.repo.prune(this.keepGoneMs);
      } catch (err) {
        this.warn('heartbeat failed', err, true);
      } finally {
        this.beating = undefined;
      }
    })();
    return this.beating;
  }

  private warn(what: string, err: unknown, again: boolean): void {
    this.log.warn(`worker registry: ${what} (${err instanceof Error ? err.message : String(err)})${again ? '; trying again at the next heartbeat' : ''}`);
  }
}
