/**
 * CEL templates (seed 002, step 8): `{{ expression }}` inside any string of a node spec, an edge
 * condition or the definition's `output`. This is the ONLY file that imports the CEL library
 * (`@marcbachmann/cel-js`, see STACK.md); `matches` runs on RE2 through `./re2.ts`.
 *
 * Variables: `input`, `config`, `tasks.<node_id>.{output,status,error}`, `system.now` (RFC 3339),
 * and in a `for_each` iteration its element under the node's alias with `<as>Index`, `<as>Count`.
 *
 * Number trap (STACK.md): JSON numbers reach CEL as `double`, integer literals are `int`, and CEL
 * has no mixed arithmetic. Weft registers `double op int` and `int op double` for `+ - * /` (and
 * `%` for doubles), so `{{input.count + 1}}` and `{{input.price * 1.1}}` work. Mixed comparisons
 * (`input.n > 1`, `input.n == 5`) are native CEL.
 */
import { Environment, Optional, type ParseResult } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import type { JsonValue } from '../model/workflow-types.js';
import type { RunContext } from '../model/run-context.js';
import { expressionTaskRefs, findTemplates, templatePattern } from '../model/template-syntax.js';
import { cachedRegex, RegexError, type Re2Regex } from './re2.js';
import type { TemplateResolver } from './template-resolver.js';

/**
 * Structural limits on every expression (tenants write them): at most 2,000 AST nodes, nesting
 * depth 64, 1,000 list elements / map entries in literals, 32 call arguments.
 */
export const CEL_LIMITS = {
  maxAstNodes: 2000,
  maxDepth: 64,
  maxListElements: 1000,
  maxMapEntries: 1000,
  maxCallArguments: 32,
} as const;

/**
 * Work one evaluation of one expression may do; templates run inside the coordinator, so one
 * tenant's expression must not stall or exhaust it for everyone. The parse-time
 * {@link CEL_LIMITS} bound the expression's text; these bound what it does with the data:
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

/** Longest accepted expression, in characters (between `{{` and `}}`). */
export const MAX_EXPRESSION_LENGTH = 4096;

/** How many distinct compiled expressions are kept (least recently used are evicted). */
export const PROGRAM_CACHE_SIZE = 10_000;

/**
 * A template that cannot be compiled or evaluated. The message names the expression and the CEL
 * error (e.g. `cannot evaluate {{ input.missing }}: No such key: missing`); it never contains the
 * run's input, config or outputs.
 */
export class TemplateError extends Error {
  constructor(
    /** The CEL expression, trimmed, without the braces. */
    readonly expression: string,
    /** The CEL error, one line. */
    readonly reason: string,
    /** `syntax`: the expression never compiles; `evaluation`: it failed on this context. */
    readonly kind: 'syntax' | 'evaluation' = 'evaluation',
  ) {
    super(`${kind === 'syntax' ? 'CEL syntax error in' : 'cannot evaluate'} {{ ${expression} }}: ${reason}`);
    this.name = 'TemplateError';
  }
}

type Arith = (a: number, b: number) => number;

function modulo(a: number, b: number): number {
  if (b === 0) throw new Error('modulus by zero');
  return a % b;
}

/** One environment for the process; building it is the expensive part (STACK.md). */
function createEnvironment(): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: true,
    homogeneousAggregateLiterals: false,
    limits: CEL_LIMITS,
  });
  const ops: Record<string, Arith> = {
    '+': (a, b) => a + b,
    '-': (a, b) => a - b,
    '*': (a, b) => a * b,
    '/': (a, b) => a / b,
    '%': modulo,
  };
  for (const [op, fn] of Object.entries(ops)) {
    env.registerOperator(`double ${op} int: double`, (a: number, b: bigint) => fn(a, Number(b)));
    env.registerOperator(`int ${op} double: double`, (a: bigint, b: number) => fn(Number(a), b));
  }
  // CEL defines % on int/uint only; JSON numbers are doubles, so `input.n % 2` needs this.
  env.registerOperator('double % double: double', (a: number, b: number) => modulo(a, b));
  registerLinearMatches(env);
  return env;
}

// ---------------------------------------------------------------------------------------------
// `matches` in linear time.
//
// The library's `string.matches(string)` runs JavaScript's backtracking RegExp, which a pattern
// like `(a+)+$` turns into minutes of CPU on the coordinator's event loop. Built-in overloads
// cannot be replaced, but macros are looked up by name and arity at parse time, before
// overloads: a macro named `matches` taking one argument takes over every `x.matches(p)` call.
// Its receiver type only has to differ from `string` for the registration to be accepted; the
// receiver it declares is a private marker type and the macro checks the real receiver itself.
// The macro runs RE2 (`re2js`, see ./re2.ts), CEL's own regex dialect. The resolver spec pins
// this takeover: if a library upgrade stops honouring it, the RE2-only tests fail.

/** Marker receiver type of the `matches` macro (never a value). */
class LinearMatchesMacro {}

/** The slice of the library's type checker and evaluator a macro uses (see its README). */
interface CelType {
  kind: string;
  name: string;
}
interface MacroChecker {
  check(ast: unknown, ctx: unknown): CelType;
  getType(name: string): CelType;
  createError(code: string, message: string, ast: unknown): Error;
}
interface MacroEvaluator {
  run(ast: unknown, ctx: unknown): unknown;
  createError(code: string, message: string, ast: unknown): Error;
}
interface MatchesMacro {
  ast: unknown;
  receiver: { op: string; args: unknown };
  pattern: { op: string; args: unknown };
  typeCheck(chk: MacroChecker, m: MatchesMacro, ctx: unknown): CelType;
  evaluate(ev: MacroEvaluator, m: MatchesMacro, ctx: unknown): boolean;
}

/**
 * Why a pattern is refused. A literal pattern is part of the definition and is quoted; one that
 * was computed may come from the run's data, which errors never show, so only the reason is given
 * (the error names the expression it came from).
 */
function regexErrorText(err: unknown, literal: boolean): string {
  if (err instanceof RegexError) return literal ? err.message : err.reason;
  return errorText(err);
}

function registerLinearMatches(env: Environment): void {
  env.registerType('WeftLinearMatches', LinearMatchesMacro);
  env.registerFunction('WeftLinearMatches.matches(ast): bool', (opts: { ast: unknown; receiver: unknown; args: unknown[] }) => {
    const macro: MatchesMacro = {
      ast: opts.ast,
      receiver: opts.receiver as MatchesMacro['receiver'],
      pattern: opts.args[0] as MatchesMacro['pattern'],
      typeCheck(chk, m, ctx) {
        const rt = chk.check(m.receiver, ctx);
        const pt = chk.check(m.pattern, ctx);
        const ok = (t: CelType): boolean => t.kind === 'dyn' || t.name === 'string';
        if (!ok(rt) || !ok(pt)) {
          throw chk.createError('no_matching_overload', `found no matching overload for '${rt.name}.matches(${pt.name})'`, m.ast);
        }
        // A literal pattern is compiled now, so publishing reports a bad one.
        if (m.pattern.op === 'value' && typeof m.pattern.args === 'string') {
          try {
            cachedRegex(m.pattern.args);
          } catch (err) {
            throw chk.createError('invalid_regular_expression', `Invalid regular expression: ${regexErrorText(err, true)}`, m.ast);
          }
        }
        return chk.getType('bool');
      },
      evaluate(ev, m, ctx) {
        const text = ev.run(m.receiver, ctx);
        const pattern = ev.run(m.pattern, ctx);
        if (typeof text !== 'string' || typeof pattern !== 'string') {
          throw ev.createError('no_matching_overload', `found no matching overload for '${celTypeName(text)}.matches(${celTypeName(pattern)})'`, m.ast);
        }
        let re: Re2Regex;
        try {
          re = cachedRegex(pattern);
        } catch (err) {
          const literal = m.pattern.op === 'value';
          throw ev.createError('invalid_regular_expression', `Invalid regular expression: ${regexErrorText(err, literal)}`, m.ast);
        }
        // re2js cannot be stopped part-way: the match is charged its worst case before it runs.
        const { maxRegexSteps } = EVALUATION_LIMITS;
        const meter = currentMeter;
        const cost = re.cost(text);
        if (meter) {
          if (meter.regexSteps + cost > maxRegexSteps) throw meter.exhaust(`${maxRegexSteps} regular expression steps`);
          meter.regexSteps += cost;
        } else if (cost > maxRegexSteps) {
          throw ev.createError('evaluation_budget', `evaluation exceeds its budget of ${maxRegexSteps} regular expression steps`, m.ast);
        }
        return re.test(text);
      },
    };
    return macro;
  });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function celTypeName(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (v === null || v === undefined) return 'null_type';
  if (Array.isArray(v)) return 'list';
  return 'map';
}

// ---------------------------------------------------------------------------------------------
// The evaluation budget.
//
// The library has parse-time limits only. After a program type-checks, every node of its AST is
// instrumented: before it runs it costs one unit (and refuses to run once the budget is spent),
// and when it produces a value it costs that value's size. Evaluation is synchronous, so the
// meter of the evaluation in progress is a module variable.

/** The budget of the evaluation in progress (see {@link EVALUATION_LIMITS}). */
class Meter {
  operations = 0;
  valueSize = 0;
  regexSteps = 0;
  /** Set once a limit is exceeded; thrown again by every later operation. */
  error?: Error;

  /** Marks the budget spent and returns the error to throw (one object: CEL may absorb it). */
  exhaust(what: string): Error {
    this.error ??= new Error(`evaluation exceeds its budget of ${what}`);
    return this.error;
  }
}

let currentMeter: Meter | undefined;

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
    const meter = currentMeter;
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
function instrument(root: unknown): void {
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

const env = createEnvironment();

/** A compiled expression and the node ids it reads statically (`undefined`: any). */
type Compiled = { program: ParseResult; refs: string[] | undefined } | { error: string };

/** Bounded LRU of compiled expressions (syntax errors are cached too). */
const programs = new Map<string, Compiled>();

function firstLine(err: unknown): string {
  if (err && typeof err === 'object' && 'summary' in err && typeof err.summary === 'string') {
    return err.summary;
  }
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0];
}

function describeStaticError(expression: string, err: unknown): string {
  const range = (err as { range?: { start: number } } | undefined)?.range;
  const where = range && range.start >= 0 ? ` (column ${range.start + 1})` : '';
  return `${firstLine(err)}${where}`;
}

function compileEntry(expression: string): Compiled {
  const hit = programs.get(expression);
  if (hit) {
    programs.delete(expression);
    programs.set(expression, hit);
    return hit;
  }
  let entry: Compiled;
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    entry = { error: `expression longer than ${MAX_EXPRESSION_LENGTH} characters` };
  } else {
    try {
      const program = env.parse(expression);
      const checked = program.check();
      if (checked.valid) instrument(program.ast);
      entry = checked.valid ? { program, refs: expressionTaskRefs(expression) } : { error: describeStaticError(expression, checked.error) };
    } catch (err) {
      entry = { error: describeStaticError(expression, err) };
    }
  }
  programs.set(expression, entry);
  if (programs.size > PROGRAM_CACHE_SIZE) {
    programs.delete(programs.keys().next().value as string);
  }
  return entry;
}

/**
 * Compiles one CEL expression (no braces), once per distinct text (LRU cache of
 * {@link PROGRAM_CACHE_SIZE}). Rejects what can never evaluate: syntax errors, exceeded
 * {@link CEL_LIMITS}, and static type errors (unknown functions, `"a" + 1`).
 * @throws TemplateError with kind `syntax`.
 */
export function compileExpression(expression: string): ParseResult {
  return compiled(expression).program;
}

function compiled(expression: string): { program: ParseResult; refs: string[] | undefined } {
  const entry = compileEntry(expression);
  if ('error' in entry) throw new TemplateError(expression, entry.error, 'syntax');
  return entry;
}

/**
 * Checks every `{{ }}` in `text` without evaluating it (definition validation). Returns one
 * message per broken template, e.g. `CEL syntax error in {{ input.count + }}: Unexpected token: EOF
 * (column 14)`; empty when all compile.
 */
export function checkTemplateSyntax(text: string): string[] {
  const out: string[] = [];
  for (const t of findTemplates(text)) {
    const entry = compileEntry(t.expression);
    if ('error' in entry) out.push(new TemplateError(t.expression, entry.error, 'syntax').message);
  }
  return out;
}

type TaskView = { status: string; output?: unknown; error?: string };

/**
 * The variables of one resolution, built lazily on the first evaluated template. The `tasks` view
 * holds, per node, `{status, error?}` when it was reached, plus `output` when its output is
 * loaded. It is filled only with the node ids the expressions evaluated so far name statically
 * (`tasks.a`, `tasks["a"]`), O(refs); an expression that uses `tasks` otherwise (`tasks[input.k]`,
 * bare `tasks`) gets the full view, O(reached nodes), in the same key order as ever (reached nodes,
 * then loaded outputs). An expression only ever reads the ids it names, so it sees exactly what
 * the full view would show it. Outputs are never loaded here; the machine loads what the static
 * references need.
 */
class Scope {
  private vars?: Record<string, unknown>;
  // Null-prototype object: node ids such as `__proto__` stay plain keys.
  private tasks: Record<string, TaskView> = Object.create(null);
  private full = false;
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
    if (!r) return n === undefined ? undefined : n.error === undefined ? { status: n.status } : { status: n.status, error: n.error };
    const status = n?.status ?? r.status;
    const error = n?.error ?? r.error;
    return error === undefined ? { status, output: r.output } : { status, output: r.output, error };
  }

  private fullView(): Record<string, TaskView> {
    const tasks: Record<string, TaskView> = Object.create(null);
    for (const [id, n] of this.ctx.reached ?? []) {
      tasks[id] = n.error === undefined ? { status: n.status } : { status: n.status, error: n.error };
    }
    for (const [id, r] of this.ctx.tasks) {
      const seen = tasks[id];
      const status = seen?.status ?? r.status;
      const error = seen?.error ?? r.error;
      tasks[id] = error === undefined ? { status, output: r.output } : { status, output: r.output, error };
    }
    return tasks;
  }
}

function base64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/**
 * Converts a CEL value back to plain JSON: ints (BigInt) become numbers when safe (else decimal
 * strings), doubles stay numbers (so `2.0` is `2`), uints as ints, timestamps RFC 3339, durations
 * `"3600s"`, bytes base64, maps objects, types their name, optionals their value or null.
 */
function toJson(value: unknown, expression: string): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) {
        throw new TemplateError(expression, `result ${value} is not representable in JSON`);
      }
      return value === 0 ? 0 : value; // no -0
    case 'bigint':
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    case 'undefined':
      return null;
    case 'object':
      break;
    default:
      throw new TemplateError(expression, `result of type ${typeof value} is not JSON`);
  }
  if (value === null) return null;
  if (Array.isArray(value)) return value.map((v) => toJson(v, expression));
  if (value instanceof Date) return value.toISOString();
  if (value instanceof UnsignedInt) return toJson(value.value, expression);
  if (value instanceof Duration) return value.toString();
  if (value instanceof Uint8Array) return base64(value);
  if (value instanceof Optional) return value.hasValue() ? toJson(value.value(), expression) : null;
  if (value instanceof Map) {
    return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v, expression)]));
  }
  if (value instanceof Set) return [...value].map((v) => toJson(v, expression));
  const named = value as { name?: unknown; [Symbol.toStringTag]?: unknown };
  if (typeof named[Symbol.toStringTag] === 'string' && String(named[Symbol.toStringTag]).startsWith('Type<')) {
    return String(named.name);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v, expression)]));
}

/**
 * The CEL template resolver (seed 002 `Resolver`), implementing the machine's
 * {@link TemplateResolver}. Stateless apart from the process-wide compiled-program cache; safe
 * to share.
 */
export class CelTemplateResolver implements TemplateResolver {
  /**
   * Resolves every string in `spec`, recursively through arrays and object values (keys are kept
   * as written). A string that is exactly one template keeps the value's type (`"{{input.count}}"`
   * → `42`); otherwise each template is interpolated: null → `""`, strings raw, anything else as
   * JSON. `now` is `system.now`.
   * @throws TemplateError naming the first expression that fails.
   */
  resolve(spec: JsonValue, ctx: RunContext, now: Date): JsonValue {
    return this.walk(spec, new Scope(ctx, now));
  }

  /**
   * Evaluates one bare CEL expression (no braces) against the run context and returns plain JSON.
   * @throws TemplateError on a syntax or evaluation error.
   */
  evaluate(expression: string, ctx: RunContext, now: Date): JsonValue {
    return this.eval(expression.trim(), new Scope(ctx, now));
  }

  private walk(v: JsonValue, scope: Scope): JsonValue {
    if (typeof v === 'string') return this.resolveString(v, scope);
    if (Array.isArray(v)) return v.map((x) => this.walk(x, scope));
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.walk(x, scope)]));
    }
    return v;
  }

  private resolveString(s: string, scope: Scope): JsonValue {
    const matches = findTemplates(s);
    if (matches.length === 0) return s;
    if (matches.length === 1 && s.trim() === matches[0].text.trim()) {
      return this.eval(matches[0].expression, scope);
    }
    return s.replace(templatePattern(), (_whole, expr: string) => {
      const val = this.eval(expr.trim(), scope);
      if (val === null) return '';
      if (typeof val === 'string') return val;
      return JSON.stringify(val);
    });
  }

  private eval(expression: string, scope: Scope): JsonValue {
    const { program, refs } = compiled(expression);
    const vars = scope.get(refs);
    const meter = new Meter();
    const outer = currentMeter;
    let out: unknown;
    currentMeter = meter;
    try {
      out = program(vars);
    } catch (err) {
      throw new TemplateError(expression, meter.error?.message ?? firstLine(err));
    } finally {
      currentMeter = outer;
    }
    // CEL absorbs errors in `||`, `&&`, `all` and `exists`; a spent budget fails all the same.
    if (meter.error) throw new TemplateError(expression, meter.error.message);
    if (out instanceof Promise) throw new TemplateError(expression, 'asynchronous result');
    return toJson(out, expression);
  }
}
