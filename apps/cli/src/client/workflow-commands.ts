import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { operation, repeatsMessage, WeftApiError } from '@weft/client';
import { usageError } from '../exit-codes.js';
import { positiveInt, readStdin } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  DeprecateVersionMutation,
  DeprecateVersionMutationVariables,
  SetDefaultVersionMutation,
  SetDefaultVersionMutationVariables,
  WorkflowDefaultFieldsFragment,
  WorkflowDefaultQuery,
  WorkflowDefaultQueryVariables,
  WorkflowsQuery,
  WorkflowsQueryVariables,
  WorkflowVersionsQuery,
  WorkflowVersionsQueryVariables,
} from './generated/graphql.js';
import { cell, printAs, table, when, withOutput, type OutputFormat } from './output.js';
import { problemLines } from './problem-lines.js';
import { workflowGetCommand } from './workflow-get-command.js';

/** What `workflows -o json` and `versions -o json` print of a workflow. */
const WORKFLOW_FIELDS = /* GraphQL */ `
  fragment WorkflowFields on Workflow {
    id name latestVersion defaultVersion pinnedVersion createdAt updatedAt
    versions { version checksum createdAt createdBy deprecated deprecatedAt }
  }
`;

const WORKFLOWS = operation<WorkflowsQuery, WorkflowsQueryVariables>(/* GraphQL */ `
  query Workflows { workflows { ...WorkflowFields } }
  ${WORKFLOW_FIELDS}
`);

const WORKFLOW_VERSIONS = operation<WorkflowVersionsQuery, WorkflowVersionsQueryVariables>(/* GraphQL */ `
  query WorkflowVersions($id: String!) { workflow(workflowId: $id) { ...WorkflowFields } }
  ${WORKFLOW_FIELDS}
`);

/** A workflow's default: its pinned version, else its latest. */
const WORKFLOW_DEFAULT_FIELDS = /* GraphQL */ `
  fragment WorkflowDefaultFields on Workflow { id latestVersion defaultVersion pinnedVersion }
`;

const WORKFLOW_DEFAULT = operation<WorkflowDefaultQuery, WorkflowDefaultQueryVariables>(/* GraphQL */ `
  query WorkflowDefault($id: String!) { workflow(workflowId: $id) { ...WorkflowDefaultFields } }
  ${WORKFLOW_DEFAULT_FIELDS}
`);

const SET_DEFAULT_VERSION = operation<SetDefaultVersionMutation, SetDefaultVersionMutationVariables>(/* GraphQL */ `
  mutation SetDefaultVersion($id: String!, $v: Int) { setDefaultVersion(workflowId: $id, version: $v) { ...WorkflowDefaultFields } }
  ${WORKFLOW_DEFAULT_FIELDS}
`);

const DEPRECATE_VERSION = operation<DeprecateVersionMutation, DeprecateVersionMutationVariables>(/* GraphQL */ `
  mutation DeprecateVersion($id: String!, $v: Int!, $d: Boolean!) {
    deprecateVersion(workflowId: $id, version: $v, deprecated: $d) { workflowId version deprecated deprecatedAt }
  }
`);

/** A workflow's default: its pinned version, else its latest. */
type WorkflowDefault = Omit<WorkflowDefaultFieldsFragment, 'id'>;

function describeDefault(w: WorkflowDefault): string {
  return w.pinnedVersion === null
    ? `default version ${w.defaultVersion} (follows the latest)`
    : `default version ${w.pinnedVersion} (pinned; latest ${w.latestVersion})`;
}

/**
 * Reads a definition file for `apply` and `validate`: `-` is stdin.
 * @throws Error naming the file when it cannot be read.
 */
export async function readDefinitionFile(path: string): Promise<string> {
  try {
    return path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new Error(`cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
}

/**
 * A refused publish with the definition's problems, worded as `weft validate` words them:
 * `BAD_USER_INPUT: invalid workflow definition: 2 problem(s)` then one `  - <path> (node <id>):
 * <message>` line per problem. Any other error is returned as it is.
 */
export function asValidateReports(err: unknown): unknown {
  if (!(err instanceof WeftApiError)) return err;
  const [first] = err.errors;
  const problems = first?.extensions?.problems;
  if (!first || !problems?.length || err.errors.length > 1) return err;
  if (problems.length === 1 && repeatsMessage(problems[0]!, first.message)) return err;
  return new Error(`${first.extensions?.code ? `${first.extensions.code}: ` : ''}${first.message}\n${problemLines(problems).trimEnd()}`);
}

/** Registers `workflows` (and `workflows get`), `versions`, `default-version` and `deprecate`. */
export function workflowCommands(program: Command): void {
  const workflows = withOutput(withConnection(program.command('workflows')))
    .description("list the tenant's workflows with their default and latest versions; `workflows get` prints one's definition")
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(WORKFLOWS));
      const rows = r.workflows.map((w) => {
        const deprecated = w.versions.filter((v) => v.deprecated).length;
        return [
          cell(w.id),
          cell(w.name),
          `${w.defaultVersion}${w.pinnedVersion === null ? '' : ' (pinned)'}`,
          String(w.latestVersion),
          `${w.versions.length}${deprecated ? ` (${deprecated} deprecated)` : ''}`,
          when(w.updatedAt),
        ];
      });
      printAs(o.output, r.workflows, () => table(['ID', 'NAME', 'DEFAULT', 'LATEST', 'VERSIONS', 'UPDATED'], rows));
    });

  withOutput(withConnection(program.command('versions <workflowId>')))
    .description('list the versions of a workflow, marking the default, the latest and deprecated ones')
    .action(async (workflowId: string, o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(WORKFLOW_VERSIONS, { id: workflowId }));
      const w = r.workflow!;
      printAs(o.output, w, () => {
        const rows = w.versions.map((v) => {
          const marks = [v.version === w.defaultVersion ? 'default' : '', v.version === w.latestVersion ? 'latest' : '', v.deprecated ? 'deprecated' : ''];
          return [String(v.version), when(v.createdAt), cell(v.createdBy), marks.filter(Boolean).join(', ')];
        });
        return `workflow ${cell(w.id)}${w.name ? ` (${cell(w.name)})` : ''}: ${describeDefault(w)}\n${table(['VERSION', 'CREATED', 'CREATED BY', ''], rows)}`;
      });
    });

  withOutput(withConnection(program.command('default-version <workflowId>')))
    .argument('[version]', 'the version to pin', positiveInt('version'))
    .description('show the version new runs use, pin one (admin), or --unpin to follow the latest again')
    .option('--unpin', 'follow the latest version again')
    .action(async (workflowId: string, version: number | undefined, o: ConnectionFlags & { unpin?: boolean; output: OutputFormat }, cmd: Command) => {
      if (version !== undefined && o.unpin) usageError(cmd, 'give a version or --unpin, not both');
      const w: WorkflowDefaultFieldsFragment = await withClient(o, async (c) =>
        version === undefined && !o.unpin
          ? (await c.request(WORKFLOW_DEFAULT, { id: workflowId })).workflow!
          : (await c.request(SET_DEFAULT_VERSION, { id: workflowId, v: version ?? null })).setDefaultVersion,
      );
      printAs(o.output, w, () => `workflow ${cell(w.id)}: ${describeDefault(w)}\n`);
    });

  withOutput(withConnection(program.command('deprecate <workflowId>')))
    .argument('<version>', 'the version', positiveInt('version'))
    .description('deprecate a version (admin): new runs on it are refused, running runs continue')
    .option('--restore', 'undo: allow new runs on the version again')
    .action(async (workflowId: string, version: number, o: ConnectionFlags & { restore?: boolean; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(DEPRECATE_VERSION, { id: workflowId, v: version, d: !o.restore }));
      const d = r.deprecateVersion;
      printAs(
        o.output,
        d,
        () => `workflow ${d.workflowId} version ${d.version} ${d.deprecated ? 'deprecated: new runs on it are refused' : 'restored: new runs may use it'}\n`,
      );
    });

  workflowGetCommand(workflows);
}
