import { MAX_ERROR_CHARS } from '@weft/engine';

/** What replaces a resolved input value in the error of a sensitive node's attempt. */
export const REDACTED_VALUE = '<redacted>';

/** Input strings shorter than this are left alone: they would match ordinary words of the message. */
export const MIN_REDACTED_LENGTH = 4;

/**
 * The error of a `sensitive` node's attempt as it may leave the worker: `message` cut to
 * `maxChars` (default the {@link MAX_ERROR_CHARS} the coordinator stores, marker included), then
 * every value of `input` of at least {@link MIN_REDACTED_LENGTH} characters — strings at any
 * depth, numbers as they print, and object keys below the top level (the top level's are the
 * definition's own spec fields) — replaced by {@link REDACTED_VALUE}: as it is, and as it reads
 * JSON-escaped (also with every non-ASCII character escaped), percent-encoded or as Python's
 * `repr()` and `ascii()` show it (the forms an exception or a URL shows it in), longest first,
 * so that a value holding another goes whole. When the cut ends inside such a value, the
 * cut part is redacted too. Whatever the executor and the tenant's code put in the message, no
 * input value leaves with it.
 */
export function redactInputs(message: string, input: unknown, maxChars = MAX_ERROR_CHARS): string {
  const forms = secretForms(input);
  let body = message;
  let marker = '';
  if (message.length > maxChars) {
    marker = `… (truncated, ${message.length} chars)`;
    let cut = Math.max(0, maxChars - marker.length - REDACTED_VALUE.length);
    const last = message.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut--;
    body = cutTail(message.slice(0, cut), forms);
  }
  for (const f of forms) if (body.includes(f)) body = body.split(f).join(REDACTED_VALUE);
  return body + marker;
}

/**
 * An attempt's log text as it may leave the worker for a `sensitive` node: every form of every
 * input value replaced as {@link redactInputs} replaces it, never cut. With `cutAtStart` (the text
 * is the kept tail of a longer output, so it may begin inside a value) a beginning that is the end
 * of one of those forms is redacted too.
 */
export function redactLog(text: string, input: unknown, cutAtStart: boolean): string {
  const forms = secretForms(input);
  let body = cutAtStart ? cutHead(text, forms) : text;
  for (const f of forms) if (body.includes(f)) body = body.split(f).join(REDACTED_VALUE);
  return body;
}

/** `text` with its beginning redacted when it is the end of one of `forms`. */
function cutHead(text: string, forms: readonly string[]): string {
  const firstChar = text[0];
  if (firstChar === undefined) return text;
  let longest = 0;
  for (const f of forms) {
    for (let k = Math.min(f.length, text.length); k > longest; k--) {
      if (f[f.length - k] === firstChar && text.startsWith(f.slice(f.length - k))) {
        longest = k;
        break;
      }
    }
  }
  return longest > 0 ? REDACTED_VALUE + text.slice(longest) : text;
}

/** The forms of `input`'s string values worth redacting, longest first. */
function secretForms(input: unknown): string[] {
  const values = new Set<string>();
  collect(input, values, 0);
  const forms = new Set<string>();
  for (const v of values) {
    if (v.length < MIN_REDACTED_LENGTH) continue;
    forms.add(v);
    const json = JSON.stringify(v).slice(1, -1);
    forms.add(json);
    forms.add(asciiOnly(json, (c) => `\\u${hex(c, 4)}`));
    forms.add(pythonRepr(v, false));
    forms.add(pythonRepr(v, true));
    try {
      forms.add(encodeURIComponent(v));
    } catch {
      // A lone surrogate has no percent-encoding.
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `text` (a cut message) with its end redacted when it is the beginning of one of `forms`. */
function cutTail(text: string, forms: readonly string[]): string {
  const lastChar = text.at(-1);
  if (lastChar === undefined) return text;
  let longest = 0;
  for (const f of forms) {
    for (let k = Math.min(f.length, text.length); k > longest; k--) {
      if (f[k - 1] === lastChar && text.endsWith(f.slice(0, k))) {
        longest = k;
        break;
      }
    }
  }
  return longest > 0 ? text.slice(0, text.length - longest) + REDACTED_VALUE : text;
}

/** Input nesting is bounded when it is stored (1,000 levels); stop there too. */
const MAX_DEPTH = 1_000;

function collect(value: unknown, into: Set<string>, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') into.add(value);
  else if (typeof value === 'number' && Number.isFinite(value)) into.add(String(value));
  else if (Array.isArray(value)) for (const v of value) collect(v, into, depth + 1);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      if (depth > 0) into.add(key);
      collect(v, into, depth + 1);
    }
  }
}

/** `text` with every character above U+007F (UTF-16 unit by unit) written by `escape`. */
function asciiOnly(text: string, escape: (code: number) => string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out += c > 0x7f ? escape(c) : text[i];
  }
  return out;
}

/**
 * The inside of Python's `repr(value)` (or, with `ascii`, of `ascii(value)`): backslash, quote
 * and the C escapes, `\xNN` for other control characters, and with `ascii` every non-ASCII
 * character as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
 */
function pythonRepr(value: string, ascii: boolean): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0)) out += `\\x${hex(c, 2)}`;
    else if (ascii && c > 0x7f) out += c <= 0xff ? `\\x${hex(c, 2)}` : c <= 0xffff ? `\\u${hex(c, 4)}` : `\\U${hex(c, 8)}`;
    else out += ch;
  }
  return out;
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0');
}
