import { parse as scanJson, printParseErrorCode, type ParseError } from 'jsonc-parser';

/** Where a text goes wrong: 1-based line and column, and the 0-based offset into the text. */
export interface TextSpot {
  line: number;
  column: number;
  offset: number;
}

/** A JSON field's text read: its value, or what is wrong with it and, when known, where. */
export type JsonText = { ok: true; value: unknown } | { ok: false; message: string; at: TextSpot | null };

/**
 * Reads a form field's JSON text. The value is `JSON.parse`'s, so what is accepted is exactly
 * JSON; a text it refuses is scanned again with jsonc-parser (comments and trailing commas
 * refused) for where it first goes wrong, since the browsers' own messages do not always say
 * (Chromium: `Unexpected token '}', "{"a": }" is not valid JSON`); a text nested too deeply for
 * that scan gets the browser's message, without a place. The message names `label`:
 * `Input is not valid JSON: a value is expected at line 2, column 9`. With `object: true` the
 * value must be a JSON object; an empty text is `{}` then.
 */
export function readJsonText(label: string, text: string, options: { object?: boolean } = {}): JsonText {
  if (!text.trim()) return options.object ? { ok: true, value: {} } : { ok: false, message: `${label} is empty: enter a JSON value.`, at: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const found = firstSyntaxError(text);
    if (found) return { ok: false, message: `${label} is not valid JSON: ${found.what} at line ${found.at.line}, column ${found.at.column}`, at: found.at };
    return { ok: false, message: `${label} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, at: null };
  }
  if (options.object && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    return { ok: false, message: `${label} must be a JSON object ({…}), not ${describe(value)}.`, at: spotAt(text, text.length - text.trimStart().length) };
  }
  return { ok: true, value };
}

/** The 1-based line and column of `offset` in `text` (a column counts UTF-16 code units). */
export function spotAt(text: string, offset: number): TextSpot {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: before.length - lineStart + 1, offset: before.length };
}

/** The offset of 1-based `line` and `column` in `text`, clamped to the text. */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  const end = text.indexOf('\n', offset);
  return Math.min(offset + Math.max(0, column - 1), end < 0 ? text.length : end);
}

/** What jsonc-parser's error codes mean, in words. */
const WORDS: Record<string, string> = {
  InvalidSymbol: 'an unexpected character',
  InvalidNumberFormat: 'a malformed number',
  PropertyNameExpected: 'a property name in double quotes is expected',
  ValueExpected: 'a value is expected',
  ColonExpected: 'a colon is expected',
  CommaExpected: 'a comma is expected',
  CloseBraceExpected: 'a closing } is expected',
  CloseBracketExpected: 'a closing ] is expected',
  EndOfFileExpected: 'the text should end here',
  InvalidCommentToken: 'comments are not JSON',
  UnexpectedEndOfComment: 'comments are not JSON',
  UnexpectedEndOfString: 'a string is not closed',
  UnexpectedEndOfNumber: 'a number is cut short',
  InvalidUnicode: 'a malformed \\u escape',
  InvalidEscapeCharacter: 'an unknown escape after \\',
  InvalidCharacter: 'a control character (e.g. a line break) inside a string',
};

/** The first syntax error jsonc-parser finds; null when it finds none or cannot scan the text (nested too deeply for its recursion). */
function firstSyntaxError(text: string): { what: string; at: TextSpot } | null {
  const errors: ParseError[] = [];
  try {
    scanJson(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  } catch (err) {
    if (err instanceof RangeError) return null;
    throw err;
  }
  const first = errors.sort((a, b) => a.offset - b.offset)[0];
  if (!first) return null;
  const code = printParseErrorCode(first.error);
  return { what: WORDS[code] ?? code, at: spotAt(text, first.offset) };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
