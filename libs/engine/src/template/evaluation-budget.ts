/**
 * The evaluation budget of one template expression. The CEL library has parse-time limits only,
 * so after a program type-checks every node of its AST is instrumented ({@link instrument}):
 * before it runs it costs one unit (and refuses to run once the budget is spent), and when it
 * produces a value it costs that value's size. Evaluation is synchronous, so the meter of the
 * evaluation in progress is module state, set by {@link withMeter}. No CEL import: the AST is
 * read by its shape.
 */

/**
 * Work one evaluation of one expression may do; templates run inside the coordinator, so one
 * tenant's expression must not stall or exhaust it for everyone. The parse-time
 * `CEL_LIMITS` (resolver.ts) bound the expression's text; these bound what it does with the data:
 *
 * - `maxOperations`: evaluated operations (AST nodes, counting every comprehension iteration);
 *   about half a second of CPU.
 * - `maxValueSize`: the total size of the values operations produce: characters of strings,
 *   elements and entries of lists and maps, counted deeply (so a list of references to one big
 *   string counts that string each time). Reading existing data (`input.big`,
 *   `tasks.a.output`) is free. Tens of MB at most.
 * - `maxRegexSteps`: the worst-case steps of every `matches` call, charged before it runs: the
 *   pattern's RE2 program size × (text length + 1). RE2 cannot backtrack, so that is the most a
 *   match can cost; about a tenth of a second at worst, usually far less. With the smallest
 *   programs (3 instructions) it lets one evaluation search about 3 million characters.
 *
 * An expression that exceeds one fails with `evaluation exceeds its budget of …`.
 */
export const EVALUATION_LIMITS = {
  maxOperations: 1_000_000,
  maxValueSize: 10_000_000,
  maxRegexSteps: 10_000_000,
} as const;

/** The budget of the evaluation in progress (see {@link EVALUATION_LIMITS}). */
export class Meter {
  /** Operations evaluated so far. */
  operations = 0;
  /** Size of the values produced so far (characters, list elements, map entries). */
  valueSize = 0;
  /** Worst-case `matches` steps charged so far. */
  regexSteps = 0;
  /** Set once a limit is exceeded; thrown again by every later operation. */
  error?: Error;

  /** Marks the budget spent and returns the error to throw (one object: CEL may absorb it). */
  exhaust(what: string): Error {
    this.error ??= new Error(`evaluation exceeds its budget of ${what}`);
    return this.error;
  }
}

let current: Meter | undefined;

/** The meter of the evaluation in progress, or undefined outside {@link withMeter}. */
export function activeMeter(): Meter | undefined {
  return current;
}

/**
 * Runs `fn` (one synchronous evaluation) with `meter` as the active meter, then restores the
 * one that was active before; returns what `fn` returns and rethrows what it throws.
 */
export function withMeter<T>(meter: Meter, fn: () => T): T {
  const outer = current;
  current = meter;
  try {
    return fn();
  } finally {
    current = outer;
  }
}

/** Operations that hand on a value that already exists: they cost one unit, not its size. */
const PASS_THROUGH_OPS = new Set(['id', 'value', '.', '.?', '[]', '[?]', 'accuValue', 'accuPush', 'accuInc', '?:', '||', '&&', '!_']);

/** The deep size of a produced value, counted only up to `cap` (beyond it the budget is spent). */
function sizeOf(v: unknown, cap: number): number {
  let total = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0 && total <= cap) {
    const x = stack.pop();
    if (typeof x === 'string') total += x.length;
    else if (x === null || typeof x !== 'object') total += 1;
    else if (Array.isArray(x)) {
      total += x.length + 1;
      for (let i = 0; i < x.length && stack.length <= cap; i++) stack.push(x[i]);
    } else if (x instanceof Map) {
      total += x.size + 1;
      for (const [k, val] of x) stack.push(k, val);
    } else if (x instanceof Set) {
      total += x.size + 1;
      for (const e of x) stack.push(e);
    } else if (x instanceof Uint8Array) total += x.length;
    else if (Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null) {
      const keys = Object.keys(x);
      total += keys.length + 1;
      for (const k of keys) stack.push((x as Record<string, unknown>)[k]);
    } else total += 1;
  }
  return total;
}

type EvalFn = (ev: unknown, ast: unknown, ctx: unknown) => unknown;

function metered(fn: EvalFn, sized: boolean, self?: unknown): EvalFn {
  const { maxOperations, maxValueSize } = EVALUATION_LIMITS;
  return (ev, ast, ctx) => {
    const meter = current;
    if (!meter) return fn.call(self, ev, ast, ctx);
    if (meter.error) throw meter.error;
    if (++meter.operations > maxOperations) throw meter.exhaust(`${maxOperations} operations`);
    const out = fn.call(self, ev, ast, ctx);
    if (sized && !(out instanceof Promise)) {
      meter.valueSize += sizeOf(out, maxValueSize - meter.valueSize);
      if (meter.valueSize > maxValueSize) throw meter.exhaust(`${maxValueSize} units of produced values (characters, list elements, map entries)`);
    }
    return out;
  };
}

interface AstLike {
  op: string;
  args: unknown;
  meta: { evaluate?: EvalFn; alternate?: unknown; macro?: { evaluate?: EvalFn } };
  setMeta(key: string, value: unknown): unknown;
}

function isAstNode(x: object): x is AstLike {
  return typeof (x as AstLike).op === 'string' && typeof (x as AstLike).setMeta === 'function' && 'meta' in x;
}

/**
 * Meters every node reachable from `root`: operands, macro expansions (`alternate`) and custom
 * macros' own sub-trees. Run once per compiled program, after type-checking.
 */
export function instrument(root: unknown): void {
  const seen = new Set<object>();
  const visit = (x: unknown): void => {
    if (x === null || typeof x !== 'object' || seen.has(x)) return;
    seen.add(x);
    if (Array.isArray(x)) {
      for (const e of x) visit(e);
      return;
    }
    if (isAstNode(x)) {
      const meta = x.meta;
      const sized = !PASS_THROUGH_OPS.has(x.op);
      if (meta.alternate) {
        visit(meta.alternate); // the expansion runs in this node's place and is metered itself
      } else if (meta.macro && typeof meta.macro.evaluate === 'function') {
        meta.macro.evaluate = metered(meta.macro.evaluate, sized, meta.macro);
        visit(meta.macro);
      } else if (typeof meta.evaluate === 'function') {
        x.setMeta('evaluate', metered(meta.evaluate, sized));
      }
      if (Object.prototype.hasOwnProperty.call(x, 'evaluate')) delete (x as { evaluate?: unknown }).evaluate;
      visit(x.args);
      return;
    }
    const proto = Object.getPrototypeOf(x);
    if (proto === Object.prototype || proto === null) for (const v of Object.values(x)) visit(v);
  };
  visit(root);
}
