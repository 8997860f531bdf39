/** A problem of a definition, as the engine and the API's `extensions.problems` give it. */
export interface ProblemLike {
  nodeId?: string;
  path?: string;
  message: string;
}

/**
 * One line per problem, as `weft validate` and a refused `weft apply` print them:
 * `  - <path> (node <id>): <message>`, the parts that are known.
 */
export function problemLines(problems: readonly ProblemLike[]): string {
  return problems
    .map((p) => {
      const where = [p.path, p.nodeId !== undefined && p.nodeId !== null ? `(node ${p.nodeId})` : ''].filter(Boolean).join(' ');
      return `  - ${where ? `${where}: ` : ''}${p.message}\n`;
    })
    .join('');
}
