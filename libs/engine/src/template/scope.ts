/**
 * The variables one template resolution sees: `input`, `config`, `tasks`, `system.now`, an
 * iteration's locals and a `finally` step's `run`, built from the run context without loading anything.
 */
import { failedIterations, type NodeStatus, type RunContext, type StepResult } from '../model/run-context.js';

type TaskView = { status: string; output?: unknown; error?: string; failedIterations?: number[]; iteration?: number; previous?: unknown };

/**
 * The variables of one resolution, built lazily on the first evaluated template. The `tasks` view
 * holds, per node, `{status, error?}` when it was reached (a `for_each` node's with
 * `failedIterations`, the indexes of its iterations that failed for good, ascending), plus
 * `output` when its output is loaded. It is filled only with the node ids the expressions evaluated so far name statically
 * (`tasks.a`, `tasks["a"]`), O(refs); an expression that uses `tasks` otherwise (`tasks[input.k]`,
 * bare `tasks`) gets the full view, O(reached nodes), in a fixed key order (reached nodes,
 * then loaded outputs). An expression only ever reads the ids it names, so it sees exactly what
 * the full view would show it. Outputs are never loaded here; the machine loads what the static
 * references need.
 */
export class Scope {
  private vars?: Record<string, unknown>;
  // Null-prototype object: node ids such as `__proto__` stay plain keys.
  private tasks: Record<string, TaskView> = Object.create(null);
  private full = false;
  /** The variables of one resolution against `ctx`; `now` is what `system.now` shows (RFC 3339). */
  constructor(
    private readonly ctx: RunContext,
    private readonly now: Date,
  ) {}

  /** The variables for an expression reading `refs` (`undefined`: it may read any node). */
  get(refs: readonly string[] | undefined): Record<string, unknown> {
    if (!this.vars) {
      this.vars = {
        input: this.ctx.input ?? {},
        config: this.ctx.config ?? {},
        tasks: this.tasks,
        system: { now: this.now.toISOString() },
        ...this.ctx.locals,
        ...(this.ctx.run ? { run: this.ctx.run } : {}),
      };
    }
    if (this.full) return this.vars;
    if (refs === undefined) {
      this.tasks = this.fullView();
      this.vars.tasks = this.tasks;
      this.full = true;
    } else {
      for (const id of refs) {
        if (id in this.tasks) continue;
        const view = this.viewOf(id);
        if (view) this.tasks[id] = view;
      }
    }
    return this.vars;
  }

  /** What `tasks.<id>` shows, or undefined for a node neither reached nor loaded. */
  private viewOf(id: string): TaskView | undefined {
    const n = this.ctx.reached?.get(id);
    const r = this.ctx.tasks.get(id);
    return n === undefined && r === undefined ? undefined : taskView(n, r);
  }

  private fullView(): Record<string, TaskView> {
    const tasks: Record<string, TaskView> = Object.create(null);
    for (const [id, n] of this.ctx.reached ?? []) tasks[id] = taskView(n, this.ctx.tasks.get(id));
    for (const [id, r] of this.ctx.tasks) if (!(id in tasks)) tasks[id] = taskView(undefined, r);
    return tasks;
  }
}

/** One node's view from its reached state `n` and its loaded result `r` (at least one given). */
function taskView(n: NodeStatus | undefined, r: StepResult | undefined): TaskView {
  const status = n?.status ?? r!.status;
  const error = n?.error ?? r?.error;
  const view: TaskView = { status };
  if (r) view.output = r.output;
  if (error !== undefined) view.error = error;
  if (n?.iterations) view.failedIterations = failedIterations(n.iterations);
  if (n?.loop) {
    view.iteration = n.loop.iteration;
    view.previous = n.loop.previous;
  }
  return view;
}
