import type { Command } from 'commander';
import type { Problem } from './engine-side.js';
import { problemLines } from './problem-lines.js';
import { printAs, withOutput, type OutputFormat } from './output.js';
import { readDefinitionFile } from './workflow-commands.js';

/** The outcome of validating one definition file. */
export interface Validation {
  file: string;
  valid: boolean;
  /** Every problem, each with the node id and the path (`nodes[2].spec.url`, `line 3, column 5`) when known. */
  problems: Problem[];
  /** Counts of a valid definition. */
  nodes?: number;
  edges?: number;
}

/**
 * Validates the YAML or JSON text of a definition with the engine's own parser and validator,
 * the checks the API runs when a definition is published, without a server.
 */
export async function validateSource(file: string, source: string): Promise<Validation> {
  const { parseDefinition, validateDefinition, WeftError } = await import('./engine-side.js');
  let def;
  try {
    def = parseDefinition(source);
  } catch (err) {
    if (err instanceof WeftError) return { file, valid: false, problems: err.problems };
    throw err;
  }
  const problems = validateDefinition(def);
  if (problems.length) return { file, valid: false, problems };
  return { file, valid: true, problems: [], nodes: def.nodes.length, edges: (def.edges ?? []).length };
}

/** Registers `validate`, which needs no server. */
export function validateCommand(program: Command): void {
  withOutput(program.command('validate'))
    .description('check a workflow definition (YAML or JSON) offline, as publishing would; exit code 1 when it is invalid')
    .requiredOption('-f, --file <path>', 'definition file (- for stdin)')
    .action(async (o: { file: string; output: OutputFormat }) => {
      const result = await validateSource(o.file, await readDefinitionFile(o.file));
      const name = o.file === '-' ? 'stdin' : o.file;
      printAs(o.output, result, () =>
        result.valid
          ? `${name}: valid (${result.nodes} nodes, ${result.edges} edges)\n`
          : `${name}: ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'}\n${problemLines(result.problems)}`,
      );
      if (!result.valid) process.exitCode = 1;
    });
}
