/**
 * The checks of one text that may hold `{{ }}` templates. This is where definition validation
 * meets the template layer: a template is compiled with the same CEL compiler as at run time, so
 * publishing and running agree on what an expression is.
 */
import type { Problem } from '../../errors.js';
import { checkTemplateSyntax, unknownTemplateRoots } from '../../template/resolver.js';
import { templateTaskRefs } from '../dag.js';
import { findTemplates, unclosedTemplate } from '../template-syntax.js';
import { isObject, type DefinitionContext } from './context.js';
import { suggestKey } from './suggest.js';
import { ALIAS_PATTERN, DEFAULT_ALIAS, FINALLY_ROOT, TEMPLATE_ROOTS } from './vocabulary.js';

/**
 * The problems of `text` at `path`, in this order: a `{{` never closed, each template that does
 * not compile (`CEL syntax error in {{ … }}: …`), and each static `tasks.<id>` reference to a node
 * the definition does not declare (once per template and node), and each template that reads a
 * variable no template at `path` can read ({@link templateRoots}): `unknown template root "inpt"
 * in {{inpt.order_id}}; did you mean "input"?`. Dynamic references such as `tasks[input.key]`
 * are left to run time.
 */
export function templateProblems(ctx: DefinitionContext, text: string, path: string, nodeId?: string): Problem[] {
  const out: Problem[] = [];
  const roots = templateRoots(ctx, path);
  const open = unclosedTemplate(text);
  if (open !== undefined) {
    out.push({ nodeId, path, message: `unclosed template: the {{ at column ${open + 1} has no closing }}` });
  }
  for (const message of checkTemplateSyntax(text)) out.push({ nodeId, path, message });
  for (const t of findTemplates(text)) {
    const seen = new Set<string>();
    for (const ref of templateTaskRefs([t.text]) ?? []) {
      if (ctx.declared.has(ref) || seen.has(ref)) continue;
      seen.add(ref);
      const loop = ctx.bodyOwners.get(ref);
      out.push({
        nodeId,
        path,
        message:
          loop === undefined
            ? `template {{ ${t.expression} }} references unknown node "${ref}"`
            : `template {{ ${t.expression} }} reads node "${ref}" of the body of DO_WHILE ${loop}: outside its loop, read tasks.${loop}.output`,
      });
    }
  }
  for (const { root, template } of unknownTemplateRoots(text, roots)) out.push({ nodeId, path, message: unknownRootMessage(root, template, roots) });
  return out;
}

/**
 * The variables a template at `path` may read: {@link TEMPLATE_ROOTS}; inside a node with
 * `for_each` (but not in the `for_each` itself) its alias, `<as>Index` and `<as>Count`; under the
 * definition's top-level `finally`, {@link FINALLY_ROOT} too.
 */
export function templateRoots(ctx: DefinitionContext, path: string): string[] {
  const roots = [...TEMPLATE_ROOTS];
  if (/^finally(?:$|[.[])/.test(path)) roots.push(FINALLY_ROOT);
  const m = /^nodes\[(\d+)\](.*)$/.exec(path);
  const raw = m ? ctx.nodes[Number(m[1])] : undefined;
  if (m && isObject(raw) && raw.for_each !== undefined && !m[2]!.startsWith('.for_each')) {
    const as = typeof raw.as === 'string' && ALIAS_PATTERN.test(raw.as) ? raw.as : DEFAULT_ALIAS;
    roots.push(as, `${as}Index`, `${as}Count`);
  }
  return roots;
}

/** The problem of a template reading `root`, which none of `roots` is: a near one suggested, `run` explained. */
function unknownRootMessage(root: string, template: string, roots: readonly string[]): string {
  const head = `unknown template root ${JSON.stringify(root)} in ${template}`;
  if (root === FINALLY_ROOT)
    return `${head}; only the finally step's templates may read ${FINALLY_ROOT} (run.id, run.status, run.error: the run's decided outcome)`;
  const near = suggestKey(root, roots);
  return near === undefined ? `${head}; a template reads ${roots.join(', ')}` : `${head}; did you mean ${JSON.stringify(near)}?`;
}
