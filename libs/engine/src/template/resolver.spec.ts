import { describe, expect, it } from '@jest/globals';
import { TaskStatus, type JsonValue } from '../model/workflow-types.js';
import type { RunContext, StepResult } from '../model/run-context.js';
import { EVALUATION_LIMITS } from './evaluation-budget.js';
import { CelTemplateResolver, checkTemplateSyntax, compileExpression, TemplateError } from './resolver.js';
import { findTemplates } from '../model/template-syntax.js';

const NOW = new Date('2030-01-01T12:00:00.000Z');
const r = new CelTemplateResolver();

function ctx(input: JsonValue, tasks: Record<string, StepResult> = {}, config: JsonValue = {}): RunContext {
  return { input, config, tasks: new Map(Object.entries(tasks)) };
}
const done = (output: JsonValue): StepResult => ({ status: TaskStatus.Completed, output });
const resolve = (spec: JsonValue, c: RunContext = ctx({})): JsonValue => r.resolve(spec, c, NOW);

describe('type preservation and interpolation', () => {
  const c = ctx({ count: 42, id: 7, name: 'ann', nothing: null, tags: ['a', 'b'] }, { fetch: done({ total: 1200 }) });

  it('a string that is exactly one template keeps the value type', () => {
    expect(resolve('{{input.count}}', c)).toBe(42);
    expect(resolve('{{tasks.fetch.output}}', c)).toEqual({ total: 1200 });
    expect(resolve('  {{ input.tags }}  ', c)).toEqual(['a', 'b']);
    expect(resolve('{{input.nothing}}', c)).toBeNull();
    expect(resolve('{{input.count > 40}}', c)).toBe(true);
  });

  it('otherwise interpolates: null as "", strings raw, other values as JSON', () => {
    expect(resolve('order {{input.id}} ready', c)).toBe('order 7 ready');
    expect(resolve('{{input.name}}-{{input.id}}', c)).toBe('ann-7');
    expect(resolve('[{{input.nothing}}]', c)).toBe('[]');
    expect(resolve('t={{tasks.fetch.output}} tags={{input.tags}}', c)).toBe('t={"total":1200} tags=["a","b"]');
  });

  it('walks arrays and object values, keeping keys and non-string values', () => {
    const spec = { url: 'https://x/{{input.id}}', n: 3, ok: true, list: ['{{input.count}}', { deep: '{{input.name}}' }], '{{input.id}}': 'key kept' };
    expect(resolve(spec, c)).toEqual({ url: 'https://x/7', n: 3, ok: true, list: [42, { deep: 'ann' }], '{{input.id}}': 'key kept' });
    expect(resolve('no templates here', c)).toBe('no templates here');
    expect(resolve(null, c)).toBeNull();
  });

  it('exposes config, task status and error, and system.now', () => {
    const withFail = ctx({}, { a: done({ x: 1 }), b: { status: TaskStatus.Failed, output: null, error: 'boom' } }, { region: 'eu' });
    expect(resolve('{{config.region}}', withFail)).toBe('eu');
    expect(resolve('{{tasks.a.status}}', withFail)).toBe('COMPLETED');
    expect(resolve('{{tasks.b.error}}', withFail)).toBe('boom');
    expect(resolve('{{has(tasks.a.error)}}', withFail)).toBe(false);
    expect(resolve('{{system.now}}', withFail)).toBe('2030-01-01T12:00:00.000Z');
    expect(resolve('{{timestamp(system.now) + duration("1h")}}', withFail)).toBe('2030-01-01T13:00:00.000Z');
  });

  it('treats a missing input as an empty object', () => {
    expect(resolve('{{has(input.x)}}', { input: null, config: null, tasks: new Map() })).toBe(false);
  });
});

describe('numbers: JSON doubles meet CEL int literals', () => {
  const c = ctx({ count: 42, price: 10, n: 5, items: [1, 2, 3] });

  it('JSON numbers mix with int literals in arithmetic', () => {
    expect(resolve('{{input.count + 1}}', c)).toBe(43);
    expect(resolve('{{1 + input.count}}', c)).toBe(43);
    expect(resolve('{{input.count - 2}}', c)).toBe(40);
    expect(resolve('{{input.count / 2}}', c)).toBe(21);
    expect(resolve('{{input.count * 2}}', c)).toBe(84);
    expect(resolve('{{input.n % 2}}', c)).toBe(1);
    expect(resolve('{{input.price * 1.1}}', c) as number).toBeCloseTo(11, 10);
    expect(resolve('n={{input.count + 1}}', c)).toBe('n=43');
  });

  it('JSON numbers compare with int literals', () => {
    expect(resolve('{{input.n > 1}}', c)).toBe(true);
    expect(resolve('{{input.n <= 1}}', c)).toBe(false);
    expect(resolve('{{input.n == 5}}', c)).toBe(true);
    expect(resolve('{{input.n != 5}}', c)).toBe(false);
    expect(resolve('{{5 >= input.n && input.n < 6}}', c)).toBe(true);
  });

  it('CEL ints and integral doubles come back as plain JS numbers', () => {
    const size = resolve('{{size(input.items)}}', c);
    expect(size).toBe(3);
    expect(typeof size).toBe('number');
    const two = resolve('{{2.0}}', c);
    expect(two).toBe(2);
    expect(Number.isInteger(two)).toBe(true);
    expect(resolve('{{[1, 2.5, "x"]}}', c)).toEqual([1, 2.5, 'x']);
    expect(resolve('{{input.items.map(x, x * 2)}}', c)).toEqual([2, 4, 6]);
    expect(resolve('{{9007199254740993 * 2}}', c)).toBe('18014398509481986'); // unsafe ints keep their digits
  });

  it('refuses results JSON cannot hold', () => {
    expect(() => resolve('{{1.0 / 0.0}}', c)).toThrow(/not representable in JSON/);
  });
});

describe('errors', () => {
  it('names the expression and the CEL error, never the context', () => {
    const secret = ctx({ password: 'hunter2', nested: { token: 'abc-secret' } });
    let err: unknown;
    try {
      resolve({ url: 'x', body: 'pw {{input.nested.missing}}' }, secret);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TemplateError);
    const te = err as TemplateError;
    expect(te.message).toBe('cannot evaluate {{ input.nested.missing }}: No such key: missing');
    expect(te.expression).toBe('input.nested.missing');
    expect(te.message).not.toMatch(/hunter2|abc-secret/);
  });

  it('reports syntax errors as TemplateError of kind syntax', () => {
    expect(() => resolve('{{input.count +}}')).toThrow(TemplateError);
    try {
      resolve('{{input.count +}}');
    } catch (e) {
      expect((e as TemplateError).kind).toBe('syntax');
      expect((e as TemplateError).message).toMatch(/^CEL syntax error in \{\{ input\.count \+ \}\}: Unexpected token: EOF/);
    }
  });

  it('enforces structural limits', () => {
    const deep = 'input' + '.a'.repeat(100);
    expect(checkTemplateSyntax(`{{${deep}}}`)[0]).toMatch(/maxDepth/);
    const long = `{{${'1 + '.repeat(2000)}1}}`;
    expect(checkTemplateSyntax(long)).toHaveLength(1);
  });
});

describe('checkTemplateSyntax and compilation', () => {
  it('lists one message per broken template and nothing for good ones', () => {
    expect(checkTemplateSyntax('ok {{input.a}} and {{tasks.b.output.c > 1}}')).toEqual([]);
    const msgs = checkTemplateSyntax('a {{input.a +}} b {{input.ok}} c {{nosuchfn(1)}} d {{"a" + 1}}');
    expect(msgs).toHaveLength(3);
    expect(msgs[0]).toMatch(/input\.a \+.*Unexpected token/);
    expect(msgs[1]).toMatch(/nosuchfn/);
    expect(msgs[2]).toMatch(/no such overload: string \+ int/);
    expect(checkTemplateSyntax('no templates')).toEqual([]);
  });

  it('compiles each distinct expression once', () => {
    expect(compileExpression('input.x + 1')).toBe(compileExpression('input.x + 1'));
    expect(compileExpression('input.x + 1')).not.toBe(compileExpression('input.x + 2'));
  });

  it('finds every closed {{ }} template, trimming its expression', () => {
    expect(findTemplates('a {{ x }} b {{y.z}}').map((t) => t.expression)).toEqual(['x', 'y.z']);
    expect(findTemplates('{{ unterminated')).toEqual([]);
  });
});

describe('matches runs on RE2, in linear time (templates run inside the coordinator)', () => {
  it('answers a catastrophic-backtracking pattern instead of freezing the event loop', () => {
    // JavaScript's RegExp needs seconds for 30 a's (minutes with a few more); RE2 cannot backtrack.
    const c = ctx({ s: `${'a'.repeat(30)}!`, long: `${'a'.repeat(100_000)}!` });
    expect(resolve('{{ input.s.matches("(a+)+$") }}', c)).toBe(false);
    expect(resolve('{{ input.s.matches("^a+!$") }}', c)).toBe(true);
    expect(resolve('{{ input.long.matches("(a|a)*b") }}', c)).toBe(false);
  });

  it('uses RE2, not RegExp: a backreference is refused when published and when run', () => {
    expect(checkTemplateSyntax('{{ input.s.matches("(a)\\\\1") }}')).toEqual([
      'CEL syntax error in {{ input.s.matches("(a)\\\\1") }}: Invalid regular expression: backreferences are not supported (RE2 syntax): `\\1` in `(a)\\1` (column 1)',
    ]);
    expect(() => resolve('{{ input.s.matches("(a)\\\\1") }}', ctx({ s: 'aa' }))).toThrow(TemplateError);
    // A computed pattern may come from the run's data, which errors never show: only the reason.
    expect(() => resolve('{{ input.s.matches(input.p) }}', ctx({ s: 'aa', p: '(a)\\1' }))).toThrow(
      new TemplateError('input.s.matches(input.p)', 'Invalid regular expression: backreferences are not supported (RE2 syntax)'),
    );
    expect(checkTemplateSyntax('{{ "x".matches("(?<=a)b") }}')).toEqual([expect.stringContaining('lookbehind assertions are not supported (RE2 syntax)')]);
    expect(checkTemplateSyntax('{{ "x".matches("[a") }}')).toEqual([expect.stringContaining('Invalid regular expression: missing closing ]: `[a` in `[a`')]);
    expect(checkTemplateSyntax('{{ input.s.matches(input.p) }}')).toEqual([]); // computed: checked when run
  });

  it('keeps CEL semantics: an unanchored RE2 search, RE2 flags, and type errors for non-strings', () => {
    const c = ctx({ s: 'Order-42', n: 5 });
    expect(resolve('{{ input.s.matches("\\\\d+") }}', c)).toBe(true);
    expect(resolve('{{ input.s.matches("er-4") }}', c)).toBe(true);
    expect(resolve('{{ input.s.matches("^order") }}', c)).toBe(false);
    expect(resolve('{{ input.s.matches("(?i)^order") }}', c)).toBe(true); // RE2 inline flag; RegExp has none
    expect(resolve('{{ input.s.matches("^\\\\pL+-\\\\d+\\\\z") }}', c)).toBe(true); // RE2's \z
    expect(checkTemplateSyntax('{{ "a".matches(1) }}')).toEqual([expect.stringMatching(/found no matching overload for 'string.matches\(int\)'/)]);
    expect(() => resolve('{{ input.n.matches("5") }}', c)).toThrow(/found no matching overload for 'double.matches\(string\)'/);
  });

  it('charges every match its worst case, pattern program size × (text length + 1)', () => {
    // `a*a*a*b` compiles to 9 instructions: 2 million characters would cost 18 million steps.
    const c = ctx({ big: 'a'.repeat(2_000_000), ok: 'a'.repeat(1_000_000) });
    expect(() => resolve('{{ input.big.matches("a*a*a*b") }}', c)).toThrow(
      `cannot evaluate {{ input.big.matches("a*a*a*b") }}: evaluation exceeds its budget of ${EVALUATION_LIMITS.maxRegexSteps} regular expression steps`,
    );
    expect(resolve('{{ input.ok.matches("a*a*a*b") }}', c)).toBe(false);
    // The budget is per evaluation: two such searches are too many, even where CEL would absorb it.
    expect(() => resolve('{{ input.ok.matches("a*a*a*b") || input.ok.matches("a*a*a*c") || true }}', c)).toThrow(/regular expression steps/);
  });
});

describe('the evaluation budget (EVALUATION_LIMITS)', () => {
  const ten = '[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]';

  it('stops nested comprehensions that would run a hundred million steps', () => {
    const expr = `cel.bind(l, ${ten}, l.exists(a, l.exists(b, l.exists(c, l.exists(d, l.exists(e, l.exists(f, l.exists(g, l.exists(h, false)))))))))`;
    expect(() => resolve(`{{ ${expr} }}`)).toThrow(
      `cannot evaluate {{ ${expr} }}: evaluation exceeds its budget of ${EVALUATION_LIMITS.maxOperations} operations`,
    );
  });

  it('fails all the same when CEL would absorb the error (a || true)', () => {
    const expr = `cel.bind(l, ${ten}, l.exists(a, l.exists(b, l.exists(c, l.exists(d, l.exists(e, l.exists(f, l.exists(g, false))))))) || true)`;
    expect(() => resolve(`{{ ${expr} }}`)).toThrow(/exceeds its budget of \d+ operations/);
  });

  it('stops an expression that would build hundreds of MB by repeated concatenation', () => {
    // Each level doubles: 2 MB, 4 MB, … 64 MB of text, or a 32-element list of 1 MB strings joined.
    const c = ctx({ s: 'x'.repeat(1_000_000) });
    const strings = 'cel.bind(a, input.s + input.s, cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, cel.bind(e, d + d, e + e)))))';
    const lists = 'cel.bind(a, [input.s, input.s], cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, d + d)))).join("")';
    for (const expr of [strings, lists]) {
      expect(() => resolve(`{{ ${expr} }}`, c)).toThrow(/exceeds its budget of 10000000 units of produced values/);
    }
  });

  it('leaves room for real work: mapping a 100,000-element input and reading a 5 MB output', () => {
    const items = Array.from({ length: 100_000 }, (_, i) => ({ name: `n${i}` }));
    const big = 'y'.repeat(5_000_000);
    const c = ctx({ items }, { fetch: done({ body: big }) });
    expect(resolve('{{ input.items.map(i, i.name).size() }}', c)).toBe(100_000);
    expect(resolve('{{ size(tasks.fetch.output.body) + size(tasks.fetch.output.body) }}', c)).toBe(10_000_000);
    expect(resolve('{{ tasks.fetch.output.body }}', c)).toBe(big);
  });
});
