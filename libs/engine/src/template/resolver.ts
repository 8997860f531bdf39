/**
 * CEL templates: `{{ expression }}` inside any string of a node spec, an edge condition or the
 * definition's `output`. This is the ONLY file that imports the CEL library
 * (`@marcbachmann/cel-js`): the environment, compilation and the conversion of CEL values back to
 * JSON. The evaluation budget (evaluation-budget.ts), `matches` on RE2 (linear-matches.ts) and
 * the variables of one resolution (scope.ts) reach the library only through what this file hands
 * them.
 *
 * Variables: `input`, `config`, `tasks.<node_id>.{output,status,error}`, `system.now` (RFC 3339),
 * and in a `for_each` iteration its element under the node's alias with `<as>Index`, `<as>Count`.
 *
 * Numbers: JSON numbers reach CEL as `double`, integer literals are `int`, and CEL has no mixed
 * arithmetic. Weft registers `double op int` and `int op double` for `+ - * /` (and
 * `%` for doubles), so `{{input.count + 1}}` and `{{input.price * 1.1}}` work. Mixed comparisons
 * (`input.n > 1`, `input.n == 5`) are native CEL.
 */
import { Environment, Optional, type ParseResult } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import type { RunContext } from '../model/run-context.js';
import type { JsonValue } from '../model/workflow-types.js';
import { expressionTaskRefs, findTemplates, templatePattern } from '../model/template-syntax.js';
import { instrument, Meter, withMeter } from './evaluation-budget.js';
import { registerLinearMatches } from './linear-matches.js';
import { Scope } from './scope.js';
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

/** One environment for the process: building it is far more expensive than parsing with it. */
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

/** CEL evaluation errors whose message ends with the value they failed on (`Invalid duration string: <value>`). */
const VALUE_ECHOING = new Set(['invalid_duration', 'numeric_overflow']);

/**
 * The first line of an evaluation error, without the value it echoes for the codes of
 * {@link VALUE_ECHOING}: a template's error must not carry the run's input, config or outputs.
 */
function evaluationErrorText(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  const text = firstLine(err);
  if (typeof code !== 'string' || !VALUE_ECHOING.has(code)) return text;
  const colon = text.indexOf(':');
  return `${colon < 0 ? text : text.slice(0, colon)} (the value is not shown)`;
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

/** Environments that know only some variables, by their names joined with `,` (see {@link checkTemplateRoots}). */
const restricted = new Map<string, Environment>();

/** How many restricted environments are kept: a definition's alias adds a set of roots of its own. */
const RESTRICTED_CACHE_SIZE = 128;

function restrictedEnvironment(roots: readonly string[]): Environment {
  const id = roots.join(',');
  let e = restricted.get(id);
  if (!e) {
    e = env.clone({ unlistedVariablesAreDyn: false });
    for (const root of roots) e.registerVariable(root, 'dyn');
    if (restricted.size >= RESTRICTED_CACHE_SIZE) restricted.delete(restricted.keys().next().value!);
    restricted.set(id, e);
  }
  return e;
}

/**
 * The first variable outside `roots` that CEL expression `expression` reads, or `undefined` when
 * it reads none, does not compile (see {@link checkTemplateSyntax}) or fails the check for
 * another reason (`error`, the check's first line). The expression is type-checked, never
 * evaluated, in this file's environment restricted to `roots`, so variables bound inside it
 * (`map(x, …)`, `cel.bind`) count as bound.
 */
function unknownRoot(expression: string, roots: readonly string[]): { name: string } | { error: string } | undefined {
  if ('error' in compileEntry(expression)) return undefined;
  let error: unknown;
  try {
    const checked = restrictedEnvironment(roots).parse(expression).check();
    error = checked.valid ? undefined : checked.error;
  } catch (err) {
    error = err;
  }
  if (error === undefined) return undefined;
  const line = firstLine(error);
  const unknown = /Unknown variable: ([A-Za-z_][A-Za-z0-9_]*)/.exec(line);
  return unknown ? { name: unknown[1]! } : { error: line };
}

/**
 * Checks that every `{{ }}` in `text` reads no variable but `roots` (e.g. `input` and `config`
 * for a value resolved when a run starts, before any node ran). Returns one message per template
 * that reads another variable, e.g. `{{ tasks.a.output }} reads tasks; only input, config may be
 * read here`. A template that does not compile at all is left to {@link checkTemplateSyntax}.
 * Never throws.
 */
export function checkTemplateRoots(text: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of findTemplates(text)) {
    const r = unknownRoot(t.expression, roots);
    if (r === undefined) continue;
    out.push(`{{ ${t.expression} }} ${'name' in r ? `reads ${r.name}` : `cannot be checked: ${r.error}`}; only ${roots.join(', ')} may be read here`);
  }
  return out;
}

/**
 * The variables outside `roots` that the `{{ }}` templates of `text` read: one per template at
 * most (its first), with the template as written. Templates that do not compile, or fail the
 * check for another reason than an unknown variable, are left out (their own checks report
 * them). Never throws.
 */
export function unknownTemplateRoots(text: string, roots: readonly string[]): { root: string; template: string }[] {
  const out: { root: string; template: string }[] = [];
  for (const t of findTemplates(text)) {
    const r = unknownRoot(t.expression, roots);
    if (r !== undefined && 'name' in r) out.push({ root: r.name, template: t.text });
  }
  return out;
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
 * The CEL template resolver, implementing the machine's
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
    let out: unknown;
    try {
      out = withMeter(meter, () => program(vars));
    } catch (err) {
      throw new TemplateError(expression, meter.error?.message ?? evaluationErrorText(err));
    }
    // CEL absorbs errors in `||`, `&&`, `all` and `exists`; a spent budget fails all the same.
    if (meter.error) throw new TemplateError(expression, meter.error.message);
    if (out instanceof Promise) throw new TemplateError(expression, 'asynchronous result');
    return toJson(out, expression);
  }
}
