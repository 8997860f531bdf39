import { retentionTenants, RunRetentionRepository } from '@weft/persistence';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';

/** Top-level runs one statement deletes at most (each with its tree). */
export const RETENTION_ROOTS_PER_BATCH = 100;
/** Runs one statement deletes at most, trees included, past its first tree. */
export const RETENTION_RUNS_PER_BATCH = 5_000;
/** How long one pass deletes before it leaves the rest to the next, ms of this process's clock. */
export const RETENTION_PASS_MS = 10_000;

/** What one retention pass deleted. */
export interface RetentionPass {
  /** Top-level runs deleted, each with its whole tree. */
  roots: number;
  /** Runs deleted, roots and descendants together. */
  runs: number;
  /** True when the pass stopped at its time bound with trees still to delete. */
  cut: boolean;
}

/**
 * The scheduler's run retention: deletes the run trees of tenants with `retentionDays` set whose
 * root ended more than that many days ago by the database's clock, with every row keyed by their
 * runs ({@link RunRetentionRepository.deleteExpired}). A tree with a run not ended is kept.
 */
export class RunRetention {
  /** The tenant the last pass stopped after, so a pass cut short by time starts with the next one. */
  private after: string | null = null;

  constructor(private readonly ctx: CoordinatorContext) {}

  /**
   * One pass over the tenants with a retention, in rounds: each round deletes one batch (at most
   * {@link RETENTION_ROOTS_PER_BATCH} trees and {@link RETENTION_RUNS_PER_BATCH} runs, one
   * transaction) per tenant that still has expired trees, starting after the tenant the previous
   * pass stopped at, so one tenant's millions of old runs never hold back another's. Stops when
   * nothing expired is left, or once it deleted something and `budgetMs` (default
   * {@link RETENTION_PASS_MS}) passed, so every pass makes progress. A tenant
   * whose batch fails is logged and left for the next pass. Each batch is told to the observer
   * (`runsDeleted`) after its commit.
   */
  async sweep(budgetMs = RETENTION_PASS_MS): Promise<RetentionPass> {
    const { ctx } = this;
    const deadline = performance.now() + budgetMs;
    const all = await ctx.retrying('retention tenants', () => retentionTenants(ctx.ds));
    const start = this.after === null ? 0 : all.findIndex((t) => t > this.after!);
    let active = start <= 0 ? all : [...all.slice(start), ...all.slice(0, start)];
    const repo = new RunRetentionRepository(ctx.ds);
    const pass: RetentionPass = { roots: 0, runs: 0, cut: false };
    while (active.length > 0) {
      const more: string[] = [];
      for (const tenantId of active) {
        // A pass that deleted nothing yet goes on: each tenant with nothing expired is one probe.
        if (pass.roots > 0 && performance.now() >= deadline) {
          pass.cut = true;
          return pass;
        }
        try {
          const batch = await ctx.retrying('run retention', () => repo.deleteExpired(tenantId, RETENTION_ROOTS_PER_BATCH, RETENTION_RUNS_PER_BATCH));
          this.after = tenantId;
          if (batch.roots === 0) continue;
          pass.roots += batch.roots;
          pass.runs += batch.runs;
          ctx.observe((o) => o.runsDeleted?.({ tenantId, roots: batch.roots, runs: batch.runs }));
          if (batch.roots === RETENTION_ROOTS_PER_BATCH || batch.runs >= RETENTION_RUNS_PER_BATCH) more.push(tenantId);
        } catch (err) {
          ctx.log.warn(`run retention of tenant ${tenantId} failed, retrying at the next pass: ${message(err)}`);
        }
      }
      active = more;
    }
    return pass;
  }
}
