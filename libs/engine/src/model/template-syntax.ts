/**
 * The `{{ expression }}` template syntax, shared by the resolver, the static
 * task-reference analysis of the DAG and definition validation. No CEL here: this file only finds
 * templates in text.
 */

/**
 * Source of the template pattern, `{{\s*([^}]+)\s*}}`: group 1 is the
 * expression (untrimmed). An expression cannot contain `}`, so CEL map literals are not usable
 * inside a template.
 */
export const TEMPLATE_PATTERN_SOURCE = String.raw`{{\s*([^}]+)\s*}}`;

/** A fresh global regex for {@link TEMPLATE_PATTERN_SOURCE} (global regexes are stateful). */
export function templatePattern(): RegExp {
  return new RegExp(TEMPLATE_PATTERN_SOURCE, 'g');
}

const TASKS_IDENT = /\btasks\b/g;
const TASK_REF = /\btasks\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\])/g;

/**
 * The node ids one CEL expression (no braces) reads as `tasks.<id>` or `tasks["<id>"]`, in order,
 * duplicates kept; `undefined` when it uses `tasks` in any other way (`tasks[input.key]`, bare
 * `tasks`): the count of static references must equal the count of the word `tasks`. A static
 * list may name more than the expression reads (a `tasks.x` inside a string literal), never less.
 */
export function expressionTaskRefs(expression: string): string[] | undefined {
  const matches = [...expression.matchAll(TASK_REF)];
  if (matches.length !== (expression.match(TASKS_IDENT) ?? []).length) return undefined;
  return matches.map((m) => (m[1] !== undefined ? m[1] : m[2]));
}

/** String literals of a CEL expression (single, double or triple quoted, raw or not). */
const STRING_LITERAL = /[rRbB]?(?:"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')/g;
/** `run` read as a variable: not a field (`input.run`), not part of a name, not a call. */
const RUN_IDENT = /(?:^|[^.\w])run\b(?!\s*\()/;

/**
 * True when a CEL expression (no braces) reads the variable `run` (`run.status`, `run["error"]`),
 * outside its string literals. A field named run (`input.run`) is not the variable. Only the
 * `finally` step's templates may read it.
 */
export function readsRunVariable(expression: string): boolean {
  return RUN_IDENT.test(expression.replace(STRING_LITERAL, '""'));
}

/** One `{{ }}` occurrence in a text: the whole match and its trimmed CEL expression. */
export interface TemplateMatch {
  /** The full `{{ … }}` text as written. */
  text: string;
  /** The CEL expression inside, trimmed. */
  expression: string;
  /** Offset of `text` in the searched string (UTF-16 code units). */
  index: number;
}

/** Every `{{ }}` template in `text`, in order of appearance. */
export function findTemplates(text: string): TemplateMatch[] {
  const out: TemplateMatch[] = [];
  for (const m of text.matchAll(templatePattern())) {
    out.push({ text: m[0], expression: m[1].trim(), index: m.index });
  }
  return out;
}

/** True when `text` holds at least one `{{ }}` template. */
export function hasTemplate(text: string): boolean {
  return templatePattern().test(text);
}

/**
 * The offset of the first `{{` that opens no template because no `}}` follows it (e.g.
 * `"id {{input.a"`), or `undefined`. Such text would be passed on literally, which is never what
 * its author meant. A `{{` inside a template, or followed later by a `}}`, is not reported.
 */
export function unclosedTemplate(text: string): number | undefined {
  const covered: Array<[number, number]> = findTemplates(text).map((t) => [t.index, t.index + t.text.length]);
  const lastClose = text.lastIndexOf('}}');
  for (let i = text.indexOf('{{'); i !== -1; i = text.indexOf('{{', i + 1)) {
    if (covered.some(([from, to]) => i >= from && i < to)) continue;
    if (lastClose < i + 2) return i;
  }
  return undefined;
}
