import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { definitionTargets, repeatable } from './apply-command.js';
import type { EffectivePolicy, Problem } from './engine-side.js';
import { problemLines } from './problem-lines.js';
import { formatData, withOutput, type OutputFormat } from './output.js';
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
  /**
   * A valid definition's retry policy of each node that makes attempts (HTTP, CODE, SUBWORKFLOW),
   * in node order, then its `finally` step's (marked `finally: true`).
   */
  retryPolicies?: RetryPolicy[];
}

/** The retry policy of a node, or of the `finally` step (`finally: true`). */
export type RetryPolicy = EffectivePolicy & { finally?: true };

/** The node types whose tasks make attempts, so have a retry policy. */
const ATTEMPT_TYPES: readonly string[] = ['HTTP', 'CODE', 'SUBWORKFLOW'];

/**
 * Validates the YAML or JSON text of a definition with the engine's own parser and validator,
 * the checks the API runs when a definition is published, without a server.
 */
export async function validateSource(file: string, source: string): Promise<Validation> {
  const { allNodes, effectivePolicy, loopSpec, parseDefinition, validateDefinition, WeftError } = await import('./engine-side.js');
  let def;
  try {
    def = parseDefinition(source);
  } catch (err) {
    if (err instanceof WeftError) return { file, valid: false, problems: err.problems };
    throw err;
  }
  const problems = validateDefinition(def);
  if (problems.length) return { file, valid: false, problems };
  const retryPolicies: RetryPolicy[] = allNodes(def.nodes)
    .filter((n) => ATTEMPT_TYPES.includes(n.type))
    .map(effectivePolicy);
  if (def.finally) retryPolicies.push({ ...effectivePolicy(def.finally), finally: true });
  // DO_WHILE bodies' nodes and edges count with the graph's.
  const nodes = allNodes(def.nodes);
  const bodyEdges = def.nodes.reduce((sum, n) => sum + (n.type === 'DO_WHILE' ? loopSpec(n).bodyEdges.length : 0), 0);
  return { file, valid: true, problems: [], nodes: nodes.length, edges: (def.edges ?? []).length + bodyEdges, retryPolicies };
}

/**
 * What `validate` prints of one file for people: `FILE: valid (…)` and the retry policy of each
 * node that makes attempts, then of the `finally` step (`cleanup (finally)`), one per line in
 * aligned columns (`  charge  HTTP  attempts 3, …`), or its problems one per line.
 */
function validationText(name: string, result: Validation): string {
  if (!result.valid) return `${name}: ${counted(result.problems.length, 'problem')}\n${problemLines(result.problems)}`;
  const policies = (result.retryPolicies ?? []).map((p) => ({ ...p, name: p.finally ? `${p.nodeId} (finally)` : p.nodeId }));
  const idWidth = Math.max(0, ...policies.map((p) => p.name.length));
  const typeWidth = Math.max(0, ...policies.map((p) => p.type.length));
  const lines = policies.map((p) => `  ${p.name.padEnd(idWidth)}  ${p.type.padEnd(typeWidth)}  ${p.text}\n`);
  return `${name}: valid (${counted(result.nodes ?? 0, 'node')}, ${counted(result.edges ?? 0, 'edge')})\n${lines.join('')}`;
}

/** `1 node`, `2 nodes`, `0 nodes`. */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * Registers `validate`, which needs no server. `-f` takes what `apply -f` takes (files, folders,
 * `-`, repeated, `-R`); one file prints one result, several a list. Exit code 1 when any file is
 * invalid or cannot be read.
 */
export function validateCommand(program: Command): void {
  withOutput(program.command('validate'))
    .description('check workflow definitions (YAML or JSON) offline, as publishing would; exit code 1 when one is invalid')
    .requiredOption(
      '-f, --file <path>',
      'a definition file, a folder (its *.yaml, *.yml, *.json files, sorted by name), or - for stdin; repeat for several',
      repeatable,
    )
    .option('-R, --recursive', 'with a folder, its subfolders too')
    .action(async (o: { file: string[]; recursive?: boolean; output: OutputFormat }) => {
      const one =
        o.file.length === 1 &&
        !(await stat(o.file[0]!).then(
          (s) => s.isDirectory(),
          () => false,
        ));
      const targets = await definitionTargets(o.file, !!o.recursive);
      const results: Validation[] = [];
      let unreadable = 0;
      for (const t of targets) {
        // A lone file that cannot be read fails as any command does; among several, the others are still checked.
        if ('error' in t && one) throw new Error(t.error);
        if ('error' in t) {
          process.stderr.write(`error: ${t.error}\n`);
          unreadable++;
          continue;
        }
        let source: string;
        try {
          source = await readDefinitionFile(t.path);
        } catch (err) {
          if (one) throw err;
          process.stderr.write(`error: ${(err as Error).message}\n`);
          unreadable++;
          continue;
        }
        const result = await validateSource(t.path, source);
        results.push(result);
        if (o.output === 'table') process.stdout.write(validationText(t.path === '-' ? 'stdin' : t.path, result));
      }
      if (o.output !== 'table') process.stdout.write(formatData(o.output, one ? results[0] : results));
      if (unreadable || results.some((r) => !r.valid)) process.exitCode = 1;
    });
}
