/**
 * `matches` in linear time. The library's `string.matches(string)` runs JavaScript's backtracking
 * RegExp, which a pattern like `(a+)+$` turns into minutes of CPU on the coordinator's event
 * loop. Built-in overloads cannot be replaced, but macros are looked up by name and arity at
 * parse time, before overloads: a macro named `matches` taking one argument takes over every
 * `x.matches(p)` call. Its receiver type only has to differ from `string` for the registration
 * to be accepted; the receiver it declares is a private marker type and the macro checks the real
 * receiver itself. The macro runs RE2 (`re2js`, see ./re2.ts), CEL's own regex dialect. The
 * resolver spec pins this takeover: if a library upgrade stops honouring it, the RE2-only tests
 * fail.
 */
import { activeMeter, EVALUATION_LIMITS } from './evaluation-budget.js';
import { cachedRegex, RegexError, type Re2Regex } from './re2.js';

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

/**
 * The slice of the CEL library's `Environment` that registering the macro needs; declared here
 * so that resolver.ts stays the only file that imports the library.
 */
export interface MacroRegistry {
  registerType(name: string, type: new () => unknown): unknown;
  registerFunction(signature: string, handler: (opts: { ast: unknown; receiver: unknown; args: unknown[] }) => unknown): unknown;
}

/**
 * Registers the `matches` macro on `env`: from then on every `x.matches(p)` the environment
 * parses is type-checked (a literal pattern is compiled, so publishing reports a bad one) and
 * evaluated on RE2, each match charged its worst case to the active evaluation budget.
 */
export function registerLinearMatches(env: MacroRegistry): void {
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
        const meter = activeMeter();
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
