/**
 * The checks of one text that may hold `{{ }}` templates. This is where definition validation
 * meets the template layer: a template is compiled with the same CEL compiler as at run time, so
 * publishing and running agree on what an expression is.
 */
import type { Problem } from '../../errors.js';
import { checkTemplateSyntax } from '../../template/resolver.js';
import { templateTaskRefs } from '../dag.js';
import { findTemplates, readsRunVariable, unclosedTemplate } from '../template-syntax.js';
import type { DefinitionContext } from './context.js';

/**
 * The problems of `text` at `path`, in this order: a `{{` never closed, each template that does
 * not compile (`CEL syntax error in {{ … }}: …`), and each static `tasks.<id>` reference to a node
 * the definition does not declare (once per template and node). Dynamic references such as
 * `tasks[input.key]` are left to run time. Only the `finally` step's templates (`path` under
 * `finally.`) may read `run`; anywhere else each template that does is a problem.
 */
export function templateProblems(ctx: DefinitionContext, text: string, path: string, nodeId?: string): Problem[] {
  const out: Problem[] = [];
  const open = unclosedTemplate(text);
  if (open !== undefined) {
    out.push({ nodeId, path, message: `unclosed template: the {{ at column ${open + 1} has no closing }}` });
  }
  for (const message of checkTemplateSyntax(text)) out.push({ nodeId, path, message });
  const runAllowed = path.startsWith('finally.');
  for (const t of findTemplates(text)) {
    if (!runAllowed && readsRunVariable(t.expression)) {
      out.push({
        nodeId,
        path,
        message: `template {{ ${t.expression} }} reads run, which only the finally step's templates may read (run.id, run.status, run.error: the run's decided outcome)`,
      });
    }
    const seen = new Set<string>();
    for (const ref of templateTaskRefs([t.text]) ?? []) {
      if (ctx.declared.has(ref) || seen.has(ref)) continue;
      seen.add(ref);
      out.push({ nodeId, path, message: `template {{ ${t.expression} }} references unknown node "${ref}"` });
    }
  }
  return out;
}
