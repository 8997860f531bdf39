import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { Command } from 'commander';
import YAML from 'yaml';
import { operation, type WeftClient } from '@weft/client';
import { usageError } from '../exit-codes.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type { PublishWorkflowMutation, PublishWorkflowMutationVariables } from './generated/graphql.js';
import { cell, formatData, withOutput, type OutputFormat } from './output.js';
import { asValidateReports, readDefinitionFile } from './workflow-commands.js';

/** The extensions `apply -f FOLDER` takes, in lower case. */
const DEFINITION_EXTENSIONS = ['.yaml', '.yml', '.json'];

/** The flags of `apply`. */
interface ApplyFlags extends ConnectionFlags {
  file: string[];
  recursive?: boolean;
  id?: string;
  name?: string;
  output: OutputFormat;
}

/** Publishes a definition; the answer is the version published (or found identical) and its warnings. */
const PUBLISH_WORKFLOW = operation<PublishWorkflowMutation, PublishWorkflowMutationVariables>(/* GraphQL */ `
  mutation PublishWorkflow($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { workflowId version createdAt warnings { nodeId path message } } }
`);

/** A version `apply` published (or found identical), with the file it came from (`-` for stdin). */
export type Applied = { file: string } & Omit<PublishWorkflowMutation['publishWorkflow'], 'warnings'>;

/** One definition file to apply, or why a path given to `-f` yields none. */
type Target = { path: string } | { path: string; error: string };

/** The parser of an option that may be repeated (`-f a -f b`): each value added to those before it. */
export function repeatable(v: string, previous: string[] = []): string[] {
  return [...previous, v];
}

/**
 * The definition files `-f` names, in order: a file as given, `-` (stdin) as given, a folder's
 * `*.yaml`, `*.yml` and `*.json` files sorted by name (with `recursive`, its subfolders too, each
 * where its name sorts; a link to a folder is not followed, so no link can make it loop). A path
 * that cannot be read, a definition link in a folder that leads nowhere or loops, and a folder
 * without a definition file, become a target with the error, so that the other paths are still
 * applied.
 */
export async function definitionTargets(paths: readonly string[], recursive: boolean): Promise<Target[]> {
  const out: Target[] = [];
  const walk = async (dir: string): Promise<number> => {
    let found = 0;
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (recursive) found += await walk(path);
      } else if (DEFINITION_EXTENSIONS.includes(extname(e.name).toLowerCase())) {
        if (e.isFile()) {
          out.push({ path });
          found++;
          continue;
        }
        if (!e.isSymbolicLink()) continue;
        const target = await stat(path).then(
          (s) => ({ s }),
          (err: NodeJS.ErrnoException) => ({ err }),
        );
        // A link that cannot be followed is named, not skipped: its definition would go unpublished unnoticed.
        if ('err' in target) out.push({ path, error: `cannot read ${path}: ${brokenLink(target.err)}` });
        else if (target.s.isFile()) out.push({ path });
        else continue;
        found++;
      }
    }
    return found;
  };
  for (const path of paths) {
    if (path === '-') {
      out.push({ path });
      continue;
    }
    const found = await stat(path).then(
      (s) => ({ s }),
      (err: NodeJS.ErrnoException) => ({ err }),
    );
    if ('err' in found) {
      out.push({ path, error: `cannot read ${path}: ${found.err.code === 'ENOENT' ? 'no such file' : found.err.message}` });
    } else if (found.s.isDirectory()) {
      if ((await walk(path)) === 0)
        out.push({
          path,
          error: `no ${DEFINITION_EXTENSIONS.map((x) => `*${x}`).join(', ')} file in folder ${path}${recursive ? ' or below it' : ' (-R to look in its subfolders)'}`,
        });
    } else {
      out.push({ path });
    }
  }
  return out;
}

/** Why a link named like a definition cannot be followed. */
function brokenLink(err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return 'a link to a file that does not exist';
  if (err.code === 'ELOOP') return 'a link that loops';
  return err.message;
}

/**
 * Reads a definition without the YAML library's warnings on stderr (a key written as an unquoted
 * template, `{{ x }}`, is a map): what is wrong with a definition is the API's to say, once.
 */
const QUIET = { logLevel: 'error' } as const;

/**
 * The workflow id of a definition: `id` (the `--id` flag) when given, else the definition's own
 * `workflow_id` when it is a string, else the file's name without its extension (none for stdin).
 * A text that does not parse gives no `workflow_id`: the API then says what is wrong with it.
 */
export function workflowIdOf(path: string, source: string, id: string | undefined): string | undefined {
  if (id !== undefined) return id;
  // The document is read, not turned into values: the rest is the API's to check and word.
  const doc = YAML.parseDocument(source, QUIET);
  const own = doc.errors.length === 0 ? doc.get('workflow_id') : undefined;
  if (typeof own === 'string' && own !== '') return own;
  return path === '-' ? undefined : basename(path, extname(path));
}

/**
 * The workflow ids the SUBWORKFLOW nodes of a definition call (`spec.workflow`), in node order;
 * none for a text that does not parse or a call whose workflow is not a plain string.
 */
export function calledWorkflows(source: string): string[] {
  const doc = YAML.parseDocument(source, QUIET);
  if (doc.errors.length > 0) return [];
  const nodes = (doc.toJS() as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes)) return [];
  const called: string[] = [];
  for (const n of nodes as { type?: unknown; spec?: { workflow?: unknown } }[]) {
    if (n?.type === 'SUBWORKFLOW' && typeof n.spec?.workflow === 'string' && n.spec.workflow !== '') called.push(n.spec.workflow);
  }
  return called;
}

/**
 * The order `apply` publishes files in: the given order, but each file after the files of the same
 * command whose workflows it calls (`calls`, matched against `workflowId`), which are moved up to
 * just before it, so that a SUBWORKFLOW's target is published before the definition that calls it
 * and no warning says it does not exist. Files that call each other in a cycle keep their given
 * order.
 */
export function applyOrder<T extends { workflowId?: string | undefined; calls: readonly string[] }>(files: readonly T[]): T[] {
  const callees = (f: T) => files.filter((g) => g !== f && g.workflowId !== undefined && f.calls.includes(g.workflowId));
  const reaches = (from: T, to: T, seen = new Set<T>()): boolean =>
    callees(from).some((g) => g === to || (!seen.has(g) && (seen.add(g), reaches(g, to, seen))));
  const out: T[] = [];
  const visited = new Set<T>();
  const visit = (f: T) => {
    visited.add(f);
    for (const g of callees(f)) if (!visited.has(g) && !reaches(g, f)) visit(g);
    out.push(f);
  };
  for (const f of files) if (!visited.has(f)) visit(f);
  return out;
}

/** A definition file `apply` read: its text, its workflow id, and the workflows it calls. */
interface Loaded {
  path: string;
  definition: string;
  workflowId: string | undefined;
  calls: string[];
}

/** A path `apply` could not read, with why: reported as a failure in its place. */
interface Unread {
  path: string;
  failure: unknown;
  workflowId?: undefined;
  calls: string[];
}

/** Reads the targets' definitions (stdin once); a target that cannot be read carries its error. */
async function loadTargets(targets: readonly Target[], id: string | undefined): Promise<(Loaded | Unread)[]> {
  const out: (Loaded | Unread)[] = [];
  for (const t of targets) {
    if ('error' in t) {
      out.push({ path: t.path, failure: new Error(t.error), calls: [] });
      continue;
    }
    try {
      const definition = await readDefinitionFile(t.path);
      out.push({ path: t.path, definition, workflowId: workflowIdOf(t.path, definition, id), calls: calledWorkflows(definition) });
    } catch (err) {
      out.push({ path: t.path, failure: err, calls: [] });
    }
  }
  return out;
}

/** Publishes one file; prints its warnings on stderr (with the file's name when `named`). */
async function applyOne(c: WeftClient, file: Loaded, o: ApplyFlags, named: boolean): Promise<Applied> {
  const { path, definition, workflowId } = file;
  if (definition.trim() === '') throw new Error(`${path === '-' ? 'stdin' : path} is empty: there is no definition to publish`);
  if (workflowId === undefined)
    throw new Error('-f - (stdin) needs --id, or a workflow_id in the definition: there is no file name to take the workflow id from');
  const r = await c.request(PUBLISH_WORKFLOW, { i: { workflowId, name: o.name, definition } }).catch((err: unknown) => {
    throw asValidateReports(err);
  });
  // Published all the same: what may fail at run time goes to stderr, the version to stdout.
  const { warnings, ...published } = r.publishWorkflow;
  for (const w of warnings) process.stderr.write(`warning: ${named ? `${path}: ` : ''}${[w.nodeId, w.path].filter(Boolean).join(' ')}: ${w.message}\n`);
  return { file: path, ...published };
}

/** The line `apply` prints of a version for people. */
function appliedLine(a: Applied): string {
  return `workflow ${cell(a.workflowId)} version ${a.version} (${a.file === '-' ? 'stdin' : cell(a.file)})\n`;
}

/**
 * Registers `apply`: publishes each definition `-f` names (files, folders, `-`), in order, but a
 * file whose workflow another one's SUBWORKFLOW node calls before that one ({@link applyOrder}). A file
 * that fails is reported on stderr with its name and the API's problems, the others are still
 * applied, and the command then fails (exit code 1), naming the files that were not applied.
 */
export function applyCommand(program: Command): void {
  withOutput(withConnection(program.command('apply')))
    .description('publish workflow definitions (YAML or JSON) as new versions: files, folders, or - for stdin')
    .requiredOption(
      '-f, --file <path>',
      'a definition file, a folder (its *.yaml, *.yml, *.json files, sorted by name), or - for stdin; repeat for several',
      repeatable,
    )
    .option('-R, --recursive', 'with a folder, its subfolders too')
    .option('--id <workflowId>', "workflow id, for a single file (default: the definition's workflow_id, else the file name without extension)")
    .option('--name <name>', 'display name, for a single file')
    .addHelpText(
      'after',
      [
        '',
        'Prints `workflow ID version N (FILE)` per file. -o json|yaml prints the version published',
        '({file, workflowId, version, createdAt}), a list of them when -f names a folder or several files.',
        'A file that fails is named on stderr with its problems; the others are still applied, and the',
        'exit code is then 1. -f - (stdin) needs --id, or a workflow_id in the definition.',
        "A file whose workflow another file's SUBWORKFLOW node calls is applied before that file.",
      ].join('\n'),
    )
    .action(async (o: ApplyFlags, cmd: Command) => {
      // One file (not a folder, even of one file) prints one object and fails as any command does.
      const one =
        o.file.length === 1 &&
        !(await stat(o.file[0]!).then(
          (s) => s.isDirectory(),
          () => false,
        ));
      if (!one && (o.id !== undefined || o.name !== undefined)) {
        usageError(
          cmd,
          `${o.id !== undefined ? '--id' : '--name'} names one workflow: give it with a single file (each of several files takes its id from its workflow_id, else its file name)`,
        );
      }
      if (o.file.filter((f) => f === '-').length > 1) usageError(cmd, '-f - (stdin) can be given once');
      const targets = await definitionTargets(o.file, !!o.recursive);
      const files = applyOrder(await loadTargets(targets, o.id));
      const applied: Applied[] = [];
      const failed: string[] = [];
      await withClient(o, async (c) => {
        for (const t of files) {
          try {
            if ('failure' in t) throw t.failure;
            const a = await applyOne(c, t, o, !one);
            applied.push(a);
            if (o.output === 'table') process.stdout.write(appliedLine(a));
          } catch (err) {
            // A lone file fails as any command does; among several, the others are still applied.
            if (one) throw err;
            failed.push(t.path === '-' ? 'stdin' : t.path);
            process.stderr.write(`error: ${t.path === '-' ? 'stdin' : t.path}: ${(err as Error)?.message ?? String(err)}\n`);
          }
        }
      });
      if (o.output !== 'table') process.stdout.write(formatData(o.output, one ? applied[0] : applied));
      if (failed.length) throw new Error(`${failed.length} of ${targets.length} definition files not applied: ${failed.join(', ')}`);
    });
}
