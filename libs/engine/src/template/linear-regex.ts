/**
 * A linear-time regular expression matcher for CEL's `matches` (RE2 syntax, as the CEL spec
 * requires). JavaScript's RegExp backtracks: `(a+)+$` against 30 a's and a `!`, or `a*a*a*b`
 * against 1,000 a's, runs for seconds to minutes and freezes the coordinator's event loop for
 * every tenant. This matcher compiles the pattern to a Thompson NFA and simulates it one input
 * character at a time (Pike, without captures), so a match costs O(input × pattern) steps at
 * worst, whatever the pattern. It answers only "does the pattern match somewhere in the text",
 * which is all `matches` needs.
 *
 * Supported (RE2): literals; `.`; `[...]`/`[^...]` with ranges, escapes and `[:alpha:]`-style
 * ASCII classes; `\d \D \s \S \w \W`; `\pL \p{Greek} \PL \P{…}`; `\b \B \A \z ^ $`; `\Q…\E`;
 * `\x41 \x{263A}`, `\n \t \r \f \v \a` and octal `\123`; groups `(…)`, `(?:…)`, `(?P<n>…)`,
 * `(?<n>…)`; flags `(?i)`, `(?m)`, `(?s)`, `(?U)` and `(?i:…)`; alternation; `* + ? {n} {n,}
 * {n,m}` and their lazy forms. Refused, like RE2 does: backreferences, lookaround, `\C`, `\Z`,
 * repeat counts over 1,000 and programs over {@link MAX_REGEX_PROGRAM} instructions.
 *
 * Pure: no I/O, no clock. Not exported from the package; the resolver is its only user.
 */

/** A pattern that cannot be compiled; the message reads like RE2's. */
export class RegexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegexError';
  }
}

/** A match that would take more steps than allowed (the caller's evaluation budget). */
export class RegexBudgetError extends Error {
  constructor(readonly limit: number) {
    super(`regular expression match exceeds ${limit} steps`);
    this.name = 'RegexBudgetError';
  }
}

/** Largest compiled program, in instructions (bounds the per-character cost of a match). */
export const MAX_REGEX_PROGRAM = 5_000;
/** Largest `{n,m}` count, as RE2. */
export const MAX_REGEX_REPEAT = 1_000;
/** Longest pattern, in characters. */
export const MAX_REGEX_LENGTH = 4_096;

type CharTest = (cp: number) => boolean;
type AssertKind = 'bot' | 'eot' | 'bol' | 'eol' | 'word' | 'notword';

type Node =
  | { k: 'empty' }
  | { k: 'char'; test: CharTest }
  | { k: 'assert'; a: AssertKind }
  | { k: 'cat'; items: Node[] }
  | { k: 'alt'; items: Node[] }
  | { k: 'rep'; sub: Node; min: number; max: number }; // max -1: unbounded

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
}

const NL = 0x0a;

function range(lo: number, hi: number): CharTest {
  return (c) => c >= lo && c <= hi;
}
const isDigit = range(0x30, 0x39);
const isWordChar: CharTest = (c) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isSpace: CharTest = (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
const not =
  (t: CharTest): CharTest =>
  (c) =>
    !t(c);

/** RE2's ASCII classes, `[[:alpha:]]` and friends. */
const POSIX: Record<string, CharTest> = {
  alnum: (c) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a),
  alpha: (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a),
  ascii: range(0, 0x7f),
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c <= 0x1f || c === 0x7f,
  digit: isDigit,
  graph: range(0x21, 0x7e),
  lower: range(0x61, 0x7a),
  print: range(0x20, 0x7e),
  punct: (c) => (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e),
  space: (c) => isSpace(c) || c === 0x0b,
  upper: range(0x41, 0x5a),
  word: isWordChar,
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

/** `\p{Name}`: a Unicode general category or script, tested with the host's Unicode tables. */
function unicodeClass(name: string): CharTest {
  if (!/^[A-Za-z_]+$/.test(name)) throw new RegexError(`invalid character class range: \\p{${name}}`);
  for (const source of [`^\\p{${name}}$`, `^\\p{Script=${name}}$`]) {
    let re: RegExp;
    try {
      re = new RegExp(source, 'u'); // a single-character test: no backtracking possible
    } catch {
      continue;
    }
    return (c) => re.test(String.fromCodePoint(c));
  }
  throw new RegexError(`invalid character class range: \\p{${name}}`);
}

function lower(c: number): number {
  const s = String.fromCodePoint(c).toLowerCase();
  return s.length === 1 || (s.length === 2 && s.codePointAt(0)! > 0xffff) ? s.codePointAt(0)! : c;
}
function upper(c: number): number {
  const s = String.fromCodePoint(c).toUpperCase();
  return s.length === 1 || (s.length === 2 && s.codePointAt(0)! > 0xffff) ? s.codePointAt(0)! : c;
}
/** Case-insensitive version of a test (simple case folding). */
function fold(t: CharTest): CharTest {
  return (c) => t(c) || t(lower(c)) || t(upper(c));
}

/** Recursive-descent parser for the RE2 syntax above, over code points. */
class Parser {
  private readonly cps: number[];
  private pos = 0;
  private flags: Flags = { i: false, m: false, s: false };
  private depth = 0;

  constructor(private readonly pattern: string) {
    this.cps = Array.from(pattern, (ch) => ch.codePointAt(0)!);
  }

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.cps.length) throw new RegexError(`unexpected ): ${JSON.stringify(this.pattern)}`);
    return node;
  }

  private peek(off = 0): number | undefined {
    return this.cps[this.pos + off];
  }
  private is(ch: string, off = 0): boolean {
    return this.cps[this.pos + off] === ch.codePointAt(0);
  }

  private alternation(): Node {
    const items = [this.concatenation()];
    while (this.is('|')) {
      this.pos++;
      items.push(this.concatenation());
    }
    return items.length === 1 ? items[0] : { k: 'alt', items };
  }

  private concatenation(): Node {
    const items: Node[] = [];
    while (this.pos < this.cps.length && !this.is('|') && !this.is(')')) {
      const atom = this.atom();
      if (atom === undefined) continue; // a flag group such as (?i)
      items.push(this.repetitions(atom));
    }
    return items.length === 1 ? items[0] : items.length === 0 ? { k: 'empty' } : { k: 'cat', items };
  }

  /** Parses `{n}`, `{n,}` or `{n,m}` at the cursor; undefined (cursor kept) if it is not one. */
  private braces(): { min: number; max: number } | undefined {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 16)));
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
    if (min > MAX_REGEX_REPEAT || max > MAX_REGEX_REPEAT || (max !== -1 && max < min)) {
      throw new RegexError(`invalid repeat count: ${m[0]}`);
    }
    this.pos += m[0].length;
    return { min, max };
  }

  private quantifier(): { min: number; max: number } | undefined {
    if (this.is('*')) return this.pos++, { min: 0, max: -1 };
    if (this.is('+')) return this.pos++, { min: 1, max: -1 };
    if (this.is('?')) return this.pos++, { min: 0, max: 1 };
    if (this.is('{')) return this.braces();
    return undefined;
  }

  private repetitions(atom: Node): Node {
    const q = this.quantifier();
    if (!q) return atom;
    if (this.is('?')) this.pos++; // lazy: the same answer for a yes/no match
    if (this.quantifier()) throw new RegexError('bad repetition operator: repeated quantifier');
    if (atom.k === 'assert' || atom.k === 'empty') return atom; // x{n,m} of an empty match
    return { k: 'rep', sub: atom, min: q.min, max: q.max };
  }

  private charNode(test: CharTest): Node {
    return { k: 'char', test: this.flags.i ? fold(test) : test };
  }

  private literal(cp: number): Node {
    return this.charNode((c) => c === cp);
  }

  /** One atom, or undefined for a bare flag group like `(?i)`. */
  private atom(): Node | undefined {
    const cp = this.cps[this.pos];
    const ch = String.fromCodePoint(cp);
    switch (ch) {
      case '(':
        return this.group();
      case '[':
        return this.charNode(this.charClass());
      case '.':
        this.pos++;
        return { k: 'char', test: this.flags.s ? () => true : (c) => c !== NL };
      case '^':
        this.pos++;
        return { k: 'assert', a: this.flags.m ? 'bol' : 'bot' };
      case '$':
        this.pos++;
        return { k: 'assert', a: this.flags.m ? 'eol' : 'eot' };
      case '*':
      case '+':
      case '?':
        throw new RegexError(`missing argument to repetition operator: ${ch}`);
      case '{':
        if (this.braces()) throw new RegexError('missing argument to repetition operator: {');
        this.pos++;
        return this.literal(cp);
      case '\\':
        return this.escape();
      default:
        this.pos++;
        return this.literal(cp);
    }
  }

  private group(): Node | undefined {
    this.pos++; // (
    if (++this.depth > 1000) throw new RegexError('expression nests too deeply');
    const outer = { ...this.flags };
    if (this.is('?')) {
      if (this.is('=', 1) || this.is('!', 1) || (this.is('<', 1) && (this.is('=', 2) || this.is('!', 2)))) {
        throw new RegexError('lookahead and lookbehind assertions are not supported (RE2 syntax)');
      }
      if (this.is('P', 1) && this.is('<', 2)) this.groupName(3);
      else if (this.is('<', 1)) this.groupName(2);
      else {
        this.pos++; // ?
        let negate = false;
        let any = false;
        for (;;) {
          const c = this.peek();
          if (c === undefined) throw new RegexError('missing closing ): unterminated flag group');
          const f = String.fromCodePoint(c);
          this.pos++;
          if (f === '-' && !negate) negate = true;
          else if (f === 'i' || f === 'm' || f === 's') {
            this.flags[f] = !negate;
            any = true;
          } else if (f === 'U') any = true; // ungreedy: irrelevant for a yes/no match
          else if (f === ')' && any) {
            this.depth--;
            return undefined; // flags apply to the rest of the enclosing group
          } else if (f === ':') break;
          else throw new RegexError(`invalid or unsupported Perl syntax: (?${f}`);
        }
      }
    }
    const inner = this.alternation();
    if (!this.is(')')) throw new RegexError(`missing closing ): ${JSON.stringify(this.pattern)}`);
    this.pos++;
    this.flags = outer;
    this.depth--;
    return inner;
  }

  private groupName(skip: number): void {
    this.pos += skip;
    const start = this.pos;
    while (this.peek() !== undefined && !this.is('>')) this.pos++;
    const name = String.fromCodePoint(...this.cps.slice(start, this.pos));
    if (!this.is('>') || !/^[A-Za-z0-9_]+$/.test(name)) throw new RegexError(`invalid named capture: ${name}`);
    this.pos++;
  }

  /** Reads `\…` outside a class. */
  private escape(): Node {
    this.pos++; // backslash
    const cp = this.peek();
    if (cp === undefined) throw new RegexError('trailing backslash at end of expression');
    const ch = String.fromCodePoint(cp);
    switch (ch) {
      case 'A':
        this.pos++;
        return { k: 'assert', a: 'bot' };
      case 'z':
        this.pos++;
        return { k: 'assert', a: 'eot' };
      case 'b':
        this.pos++;
        return { k: 'assert', a: 'word' };
      case 'B':
        this.pos++;
        return { k: 'assert', a: 'notword' };
      case 'Q': {
        this.pos++;
        const items: Node[] = [];
        while (this.peek() !== undefined && !(this.is('\\') && this.is('E', 1))) items.push(this.literal(this.cps[this.pos++]));
        if (this.peek() !== undefined) this.pos += 2;
        return { k: 'cat', items };
      }
      default: {
        const t = this.classEscape();
        return this.charNode(t);
      }
    }
  }

  /** An escape that stands for one character or a set: `\d`, `\pL`, `\x41`, `\.`, … */
  private classEscape(): CharTest {
    const cp = this.cps[this.pos++];
    const ch = String.fromCodePoint(cp);
    switch (ch) {
      case 'd':
        return isDigit;
      case 'D':
        return not(isDigit);
      case 's':
        return isSpace;
      case 'S':
        return not(isSpace);
      case 'w':
        return isWordChar;
      case 'W':
        return not(isWordChar);
      case 'p':
      case 'P': {
        let name: string;
        if (this.is('{')) {
          const end = this.cps.indexOf(0x7d, this.pos);
          if (end < 0) throw new RegexError('invalid character class range: missing }');
          name = String.fromCodePoint(...this.cps.slice(this.pos + 1, end));
          this.pos = end + 1;
        } else {
          const c = this.peek();
          if (c === undefined) throw new RegexError('invalid character class range: \\p');
          name = String.fromCodePoint(c);
          this.pos++;
        }
        let negate = ch === 'P';
        if (name.startsWith('^')) {
          negate = !negate;
          name = name.slice(1);
        }
        const t = name === 'Any' ? () => true : unicodeClass(name);
        return negate ? not(t) : t;
      }
      case 'n':
        return single(0x0a);
      case 't':
        return single(0x09);
      case 'r':
        return single(0x0d);
      case 'f':
        return single(0x0c);
      case 'v':
        return single(0x0b);
      case 'a':
        return single(0x07);
      case 'x': {
        let hex: string;
        if (this.is('{')) {
          const end = this.cps.indexOf(0x7d, this.pos);
          if (end < 0) throw new RegexError('invalid escape sequence: \\x{');
          hex = String.fromCodePoint(...this.cps.slice(this.pos + 1, end));
          this.pos = end + 1;
        } else {
          hex = String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 2));
          this.pos += 2;
        }
        const v = /^[0-9A-Fa-f]{1,8}$/.test(hex) ? parseInt(hex, 16) : NaN;
        if (!(v <= 0x10ffff)) throw new RegexError(`invalid escape sequence: \\x${hex}`);
        return single(v);
      }
      default:
        break;
    }
    if (ch >= '1' && ch <= '9') {
      // RE2: \1-\7 followed by two more octal digits is octal; otherwise a backreference.
      const oct = String.fromCodePoint(cp, ...this.cps.slice(this.pos, this.pos + 2));
      if (/^[0-7]{3}$/.test(oct)) {
        this.pos += 2;
        return single(parseInt(oct, 8));
      }
      throw new RegexError(`backreferences are not supported (RE2 syntax): \\${ch}`);
    }
    if (ch === '0') {
      let oct = '';
      while (oct.length < 2 && this.peek() !== undefined && /[0-7]/.test(String.fromCodePoint(this.peek()!))) {
        oct += String.fromCodePoint(this.cps[this.pos++]);
      }
      return single(parseInt(oct || '0', 8));
    }
    if (cp < 0x80 && !/[A-Za-z0-9]/.test(ch)) return single(cp); // escaped punctuation
    throw new RegexError(`invalid escape sequence: \\${ch}`);
  }

  /** `[...]`: ranges, escapes and POSIX classes, optionally negated. */
  private charClass(): CharTest {
    this.pos++; // [
    let negate = false;
    if (this.is('^')) {
      negate = true;
      this.pos++;
    }
    const tests: CharTest[] = [];
    let first = true;
    for (;;) {
      const cp = this.peek();
      if (cp === undefined) throw new RegexError(`missing closing ]: ${JSON.stringify(this.pattern)}`);
      if (this.is(']') && !first) {
        this.pos++;
        break;
      }
      first = false;
      if (this.is('[') && this.is(':', 1)) {
        let end = this.pos + 2;
        while (end + 1 < this.cps.length && !(this.cps[end] === 0x3a && this.cps[end + 1] === 0x5d)) end++;
        if (end + 1 < this.cps.length) {
          let name = String.fromCodePoint(...this.cps.slice(this.pos + 2, end));
          const neg = name.startsWith('^');
          if (neg) name = name.slice(1);
          const t = POSIX[name];
          if (!t) throw new RegexError(`invalid character class range: [:${name}:]`);
          tests.push(neg ? not(t) : t);
          this.pos = end + 2;
          continue;
        }
      }
      const lo = this.classAtom();
      if (typeof lo === 'function') {
        tests.push(lo);
        continue;
      }
      if (this.is('-') && this.peek(1) !== undefined && !this.is(']', 1)) {
        this.pos++;
        const hi = this.classAtom();
        if (typeof hi === 'function' || hi < lo) throw new RegexError('invalid character class range');
        tests.push(range(lo, hi));
      } else {
        tests.push((c) => c === lo);
      }
    }
    const any: CharTest = (c) => tests.some((t) => t(c));
    return negate ? not(this.flags.i ? fold(any) : any) : any;
  }

  /** A class member: a code point, or a set for `\d`-like escapes. */
  private classAtom(): number | CharTest {
    if (!this.is('\\')) return this.cps[this.pos++];
    this.pos++;
    if (this.peek() === undefined) throw new RegexError('trailing backslash at end of expression');
    if (this.is('b')) {
      this.pos++;
      return 0x08;
    }
    const t = this.classEscape();
    return (t as CharTest & { cp?: number }).cp ?? t;
  }
}

/** A test for one code point that remembers it (so `[\x41-\x5a]` can use it as a bound). */
function single(cp: number): CharTest {
  const t = ((c: number) => c === cp) as CharTest & { cp?: number };
  t.cp = cp;
  return t;
}

const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const ASSERT = 3;
const MATCH = 4;

interface Inst {
  op: number;
  x: number;
  y: number;
  test?: CharTest;
  a?: AssertKind;
}

/** Compiles the parse tree to a Thompson NFA program. */
class Compiler {
  readonly prog: Inst[] = [];

  private push(inst: Inst): number {
    if (this.prog.length >= MAX_REGEX_PROGRAM) {
      throw new RegexError(`regular expression too large (more than ${MAX_REGEX_PROGRAM} instructions)`);
    }
    this.prog.push(inst);
    return this.prog.length - 1;
  }

  emit(n: Node): void {
    switch (n.k) {
      case 'empty':
        return;
      case 'char':
        this.push({ op: CHAR, x: this.prog.length + 1, y: 0, test: n.test });
        return;
      case 'assert':
        this.push({ op: ASSERT, x: this.prog.length + 1, y: 0, a: n.a });
        return;
      case 'cat':
        for (const item of n.items) this.emit(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        for (let i = 0; i < n.items.length; i++) {
          if (i < n.items.length - 1) {
            const split = this.push({ op: SPLIT, x: this.prog.length + 1, y: -1 });
            this.emit(n.items[i]);
            jumps.push(this.push({ op: JMP, x: -1, y: 0 }));
            this.prog[split].y = this.prog.length;
          } else {
            this.emit(n.items[i]);
          }
        }
        for (const j of jumps) this.prog[j].x = this.prog.length;
        return;
      }
      case 'rep': {
        for (let i = 0; i < n.min; i++) this.emit(n.sub);
        if (n.max === -1) {
          const split = this.push({ op: SPLIT, x: this.prog.length + 1, y: -1 });
          this.emit(n.sub);
          this.push({ op: JMP, x: split, y: 0 });
          this.prog[split].y = this.prog.length;
          return;
        }
        const splits: number[] = [];
        for (let i = n.min; i < n.max; i++) {
          splits.push(this.push({ op: SPLIT, x: this.prog.length + 1, y: -1 }));
          this.emit(n.sub);
        }
        for (const s of splits) this.prog[s].y = this.prog.length;
        return;
      }
    }
  }
}

/** A compiled pattern; safe to share and reuse. */
export interface LinearRegex {
  /** The pattern as given. */
  readonly source: string;
  /** Instructions in the program: a match costs at most this many steps per input character. */
  readonly size: number;
  /**
   * True when the pattern matches somewhere in `text` (RE2 partial match, as CEL `matches`).
   * @throws RegexBudgetError when the simulation would exceed `maxSteps` steps.
   */
  test(text: string, maxSteps?: number): boolean;
  /** Steps the last `test` took (for budgets and tests). */
  readonly lastSteps: number;
}

/**
 * Compiles an RE2-syntax pattern.
 * @throws RegexError for invalid or unsupported syntax, or a program over
 * {@link MAX_REGEX_PROGRAM} instructions.
 */
export function compileLinearRegex(pattern: string): LinearRegex {
  if (pattern.length > MAX_REGEX_LENGTH) throw new RegexError(`regular expression longer than ${MAX_REGEX_LENGTH} characters`);
  const tree = new Parser(pattern).parse();
  const c = new Compiler();
  c.emit(tree);
  c.prog.push({ op: MATCH, x: 0, y: 0 });
  return new Program(pattern, c.prog);
}

class Program implements LinearRegex {
  lastSteps = 0;
  // Work buffers, reused by every `test` (matching is synchronous and never re-entered).
  private readonly lists: [Int32Array, Int32Array];
  private readonly mark: Uint32Array;
  private readonly stack: Int32Array;
  private gen = 0;

  constructor(
    readonly source: string,
    private readonly prog: Inst[],
  ) {
    this.lists = [new Int32Array(prog.length), new Int32Array(prog.length)];
    this.mark = new Uint32Array(prog.length);
    this.stack = new Int32Array(prog.length * 2 + 2);
  }

  get size(): number {
    return this.prog.length;
  }

  test(text: string, maxSteps = Number.POSITIVE_INFINITY): boolean {
    const prog = this.prog;
    let [clist, nlist] = this.lists;
    let ccount = 0;
    let ncount = 0;
    const mark = this.mark;
    const stack = this.stack;
    if (this.gen > 0xf0000000 - 2 * text.length - 2) {
      mark.fill(0);
      this.gen = 0;
    }
    let gen = this.gen;
    let steps = 0;

    const holds = (a: AssertKind, prev: number, cur: number): boolean => {
      switch (a) {
        case 'bot':
          return prev === -1;
        case 'eot':
          return cur === -1;
        case 'bol':
          return prev === -1 || prev === NL;
        case 'eol':
          return cur === -1 || cur === NL;
        case 'word':
          return (prev !== -1 && isWordChar(prev)) !== (cur !== -1 && isWordChar(cur));
        case 'notword':
          return (prev !== -1 && isWordChar(prev)) === (cur !== -1 && isWordChar(cur));
      }
    };

    /** Adds `pc`'s epsilon closure to the list being built; true when it reaches MATCH. */
    const add = (list: Int32Array, count: number, pc: number, prev: number, cur: number): number => {
      let sp = 0;
      stack[sp++] = pc;
      while (sp > 0) {
        const p = stack[--sp];
        if (mark[p] === gen) continue;
        mark[p] = gen;
        steps++;
        const inst = prog[p];
        switch (inst.op) {
          case CHAR:
            list[count++] = p;
            break;
          case JMP:
            stack[sp++] = inst.x;
            break;
          case SPLIT:
            stack[sp++] = inst.y;
            stack[sp++] = inst.x;
            break;
          case ASSERT:
            if (holds(inst.a as AssertKind, prev, cur)) stack[sp++] = inst.x;
            break;
          case MATCH:
            return -1;
        }
      }
      return count;
    };

    let prev = -1;
    let i = 0;
    let cur = text.length > 0 ? text.codePointAt(0)! : -1;
    try {
      gen++;
      ccount = add(clist, 0, 0, prev, cur);
      for (;;) {
        if (ccount < 0) return true;
        if (steps > maxSteps) throw new RegexBudgetError(maxSteps);
        if (cur === -1) return false;
        const width = cur > 0xffff ? 2 : 1;
        const next = i + width < text.length ? text.codePointAt(i + width)! : -1;
        gen++;
        ncount = 0;
        for (let k = 0; k < ccount; k++) {
          const inst = prog[clist[k]];
          steps++;
          if ((inst.test as CharTest)(cur)) {
            ncount = add(nlist, ncount, inst.x, cur, next);
            if (ncount < 0) return true;
          }
        }
        // Unanchored search: a match may also start at the next position.
        ncount = add(nlist, ncount, 0, cur, next);
        [clist, nlist] = [nlist, clist];
        ccount = ncount;
        prev = cur;
        cur = next;
        i += width;
      }
    } finally {
      this.gen = gen;
      this.lastSteps = steps;
    }
  }
}
