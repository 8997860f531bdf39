import type { Command } from 'commander';
import YAML from 'yaml';
import { operation } from '@weft/client';
import { positiveInt } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type { WorkflowVersionBodyQuery, WorkflowVersionBodyQueryVariables } from './generated/graphql.js';
import { cell, fields, formatData, when, withOutput, type OutputFormat } from './output.js';

/** A version of a workflow (the latest without `v`) and the workflow's default and latest versions. */
const WORKFLOW_VERSION_BODY = operation<WorkflowVersionBodyQuery, WorkflowVersionBodyQueryVariables>(/* GraphQL */ `
  query WorkflowVersionBody($id: String!, $v: Int) {
    workflowVersion(workflowId: $id, version: $v) { workflowId version checksum createdAt createdBy deprecated definition source }
    workflow(workflowId: $id) { name latestVersion defaultVersion }
  }
`);

/** A version as `workflows get` reads it; its JSON `definition` as the API stores one. */
type VersionBody = Omit<NonNullable<WorkflowVersionBodyQuery['workflowVersion']>, 'definition'> & { definition: { nodes?: unknown[]; edges?: unknown[] } };

/** True when `source` is JSON text (an object), not YAML written as such. */
function isJsonText(source: string): boolean {
  if (!source.trimStart().startsWith('{')) return false;
  try {
    JSON.parse(source);
    return true;
  } catch {
    return false;
  }
}

/**
 * A version's definition as `-o yaml` prints it: the text as published when it was YAML
 * (comments and layout kept), else the stored definition written as YAML; `-o json` the stored
 * definition as indented JSON. Either can be given to `weft apply -f` again: the same definition.
 */
export function definitionText(format: 'json' | 'yaml', v: Pick<VersionBody, 'definition' | 'source'>): string {
  if (format === 'json') return formatData('json', v.definition);
  if (isJsonText(v.source)) return YAML.stringify(v.definition, { lineWidth: 0 });
  return v.source.endsWith('\n') ? v.source : `${v.source}\n`;
}

/** The summary `workflows get` prints for people. */
function summary(v: VersionBody, w: { name: string | null; latestVersion: number; defaultVersion: number }): string {
  const marks = [v.version === w.defaultVersion ? 'default' : '', v.version === w.latestVersion ? 'latest' : '', v.deprecated ? 'deprecated' : ''].filter(
    Boolean,
  );
  return (
    fields([
      ['workflow', `${cell(v.workflowId)}${w.name ? ` (${cell(w.name)})` : ''}`],
      ['version', `${v.version}${marks.length ? ` (${marks.join(', ')})` : ''}`],
      ['created', `${when(v.createdAt)}${v.createdBy ? ` by ${cell(v.createdBy)}` : ''}`],
      ['checksum', v.checksum],
      ['nodes', String(v.definition.nodes?.length ?? 0)],
      ['edges', String(v.definition.edges?.length ?? 0)],
    ]) + '(-o yaml or -o json prints the definition)\n'
  );
}

/**
 * Registers `workflows get WORKFLOW [--version N]` under `workflows`: a summary of the version
 * (default: the latest) for people; with `-o yaml` or `-o json` its definition, ready for
 * `weft apply -f` (see {@link definitionText}).
 */
export function workflowGetCommand(workflows: Command): void {
  withOutput(withConnection(workflows.command('get <workflowId>')))
    .description('print a version of a workflow: a summary, or its definition with -o yaml|json (as published, ready for weft apply -f)')
    .option('--version <n>', 'the version (default: the latest)', positiveInt('--version'))
    .action(async (workflowId: string, o: ConnectionFlags & { version?: number; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(WORKFLOW_VERSION_BODY, { id: workflowId, v: o.version ?? null }));
      const v = r.workflowVersion as VersionBody;
      process.stdout.write(o.output === 'table' ? summary(v, r.workflow!) : definitionText(o.output, v));
    });
}
