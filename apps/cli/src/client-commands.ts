import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { WeftClient } from '@weft/client';

const RUN_FIELDS = `id status workflowId version input output error createdAt finishedAt
  tasks { nodeId status attempt output error awaitedSignal iteration }`;
/** What `run-status` shows: RUN_FIELDS plus the run's place among parent and child runs. */
const RUN_STATUS_FIELDS = `id status workflowId version input output error createdAt finishedAt parentRunId parentTaskId depth
  tasks { id nodeId status attempt output error awaitedSignal iteration }
  children { id workflowId status parentTaskId }`;
const RUN_STATUSES = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];

function json(label: string) {
  return (v: string): unknown => {
    try {
      return JSON.parse(v);
    } catch (e) {
      throw new InvalidArgumentError(`${label} must be JSON (${(e as Error).message})`);
    }
  };
}

function positiveInt(label: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`${label} must be a positive integer`);
    return n;
  };
}

const ROLES = ['admin', 'operator', 'viewer'];

/** A key role in any case (`operator`, `OPERATOR`) as the API's enum value (`operator`). */
function role(v: string): string {
  const lower = v.trim().toLowerCase();
  if (!ROLES.includes(lower)) throw new InvalidArgumentError(`must be one of ${ROLES.join(', ')}`);
  return lower;
}

/** Rows as left-aligned columns separated by two spaces, the header first. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

function describeDefault(w: { defaultVersion: number; pinnedVersion: number | null; latestVersion: number }): string {
  return w.pinnedVersion === null
    ? `default version ${w.defaultVersion} (follows the latest)`
    : `default version ${w.pinnedVersion} (pinned; latest ${w.latestVersion})`;
}

function client(): WeftClient {
  const url = process.env.WEFT_URL ?? 'http://127.0.0.1:4000/graphql';
  const key = process.env.WEFT_API_KEY;
  if (!key) throw new Error('WEFT_API_KEY is not set: create a tenant with `weft admin create-tenant NAME` and export its apiKey');
  return new WeftClient(url, key);
}

function print(v: unknown): void {
  process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
}

/** A task as the client commands read it; `iteration` is set on a for_each node's iteration tasks. */
interface TaskRow {
  id?: string;
  nodeId: string;
  status: string;
  attempt: number;
  output?: unknown;
  error: string | null;
  awaitedSignal: string | null;
  iteration: number | null;
}

const COUNT_ORDER = ['COMPLETED', 'RUNNING', 'QUEUED', 'PENDING', 'WAITING', 'FAILED', 'CANCELLED', 'SKIPPED'];

/**
 * Node id -> `×5: 3 completed, 1 running, 1 failed` (the number of iterations, then each non-zero
 * count per status) for every node with iteration tasks; nodes without any are absent.
 */
export function iterationSummaries(tasks: readonly Pick<TaskRow, 'nodeId' | 'status' | 'iteration'>[]): Map<string, string> {
  const counts = new Map<string, Map<string, number>>();
  for (const t of tasks) {
    if (t.iteration == null) continue;
    const byStatus = counts.get(t.nodeId) ?? new Map<string, number>();
    counts.set(t.nodeId, byStatus.set(t.status, (byStatus.get(t.status) ?? 0) + 1));
  }
  const rank = (s: string) => (COUNT_ORDER.includes(s) ? COUNT_ORDER.indexOf(s) : COUNT_ORDER.length);
  return new Map(
    [...counts].map(([nodeId, byStatus]) => {
      const statuses = [...byStatus.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
      const total = [...byStatus.values()].reduce((n, c) => n + c, 0);
      return [nodeId, `×${total}: ${statuses.map((st) => `${byStatus.get(st)} ${st.toLowerCase()}`).join(', ')}`];
    }),
  );
}

/**
 * Prints one line per task change of a run (attempts shown 1-based, errors and awaited signals
 * included) until the run ends; returns the final run. A for_each node's line carries its
 * iteration counts (a new line when they change); an iteration gets a line of its own, as
 * `node[i]`, only when it fails.
 */
export async function watchRun(c: WeftClient, runId: string): Promise<any> {
  const seen = new Map<string, string>();
  let last: any;
  await c.subscribe(`subscription($id: ID!) { runUpdated(runId: $id) { ${RUN_FIELDS} } }`, { id: runId }, (data: any) => {
    last = data.runUpdated;
    const tasks = last.tasks as TaskRow[];
    const summaries = iterationSummaries(tasks);
    for (const t of tasks) {
      if (t.iteration != null && t.status !== 'FAILED') continue;
      const name = t.iteration == null ? t.nodeId : `${t.nodeId}[${t.iteration}]`;
      const iterations = t.iteration == null ? summaries.get(t.nodeId) : undefined;
      const key = `${t.status}#${t.attempt}#${t.error ?? ''}#${iterations ?? ''}`;
      if (seen.get(name) === key) continue;
      seen.set(name, key);
      const notes = [
        iterations ?? '',
        t.attempt > 0 ? `attempt ${t.attempt + 1}` : '',
        t.awaitedSignal ? `waiting for signal "${t.awaitedSignal}"` : '',
        t.error ? `error: ${t.error}` : '',
      ].filter(Boolean);
      process.stdout.write(`${name}: ${t.status}${notes.length ? ` (${notes.join('; ')})` : ''}\n`);
    }
    return !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(last.status);
  }).done;
  return last;
}

/**
 * What `run-status` prints of a run read with RUN_STATUS_FIELDS: the run with one entry per
 * node's own task (not per iteration); a for_each node's entry adds `iterations` (its counts)
 * and `failedIterations` (index, attempt and error of each failed one). `parent` (id, workflow,
 * status, the starting task's id) and `children` (id, workflow, status, the node that started
 * each) are there only when the run has them; `depth` only for a child run.
 */
export function runStatusView(run: any, parent: { id: string; workflowId: string; status: string } | null): Record<string, unknown> {
  const { tasks, children, parentRunId, parentTaskId, depth, ...rest } = run;
  const summaries = iterationSummaries(tasks as TaskRow[]);
  const nodeOfTask = new Map<string, string>();
  for (const t of tasks as TaskRow[]) if (t.iteration == null && t.id) nodeOfTask.set(t.id, t.nodeId);
  const view: Record<string, unknown> = {
    ...rest,
    tasks: (tasks as TaskRow[])
      .filter((t) => t.iteration == null)
      .map(({ id: _id, iteration: _iteration, ...t }) => {
        const iterations = summaries.get(t.nodeId);
        if (!iterations) return t;
        const failed = (tasks as TaskRow[])
          .filter((i) => i.nodeId === t.nodeId && i.iteration != null && i.status === 'FAILED')
          .map((i) => ({ iteration: i.iteration, attempt: i.attempt, error: i.error }));
        return { ...t, iterations, ...(failed.length ? { failedIterations: failed } : {}) };
      }),
  };
  if (parentRunId) {
    view.depth = depth;
    view.parent = { id: parentRunId, workflowId: parent?.workflowId ?? null, status: parent?.status ?? null, taskId: parentTaskId };
  }
  if (children?.length) {
    view.children = children.map((c: { id: string; workflowId: string; status: string; parentTaskId: string | null }) => ({
      id: c.id,
      workflowId: c.workflowId,
      status: c.status,
      nodeId: (c.parentTaskId && nodeOfTask.get(c.parentTaskId)) ?? null,
    }));
  }
  return view;
}

/** Starts a watch, prints the outcome, and sets the exit code 2 unless the run succeeded. */
async function watchAndReport(c: WeftClient, runId: string): Promise<void> {
  const final = await watchRun(c, runId);
  print({ status: final?.status, output: final?.output, error: final?.error });
  if (final?.status !== 'SUCCEEDED') process.exitCode = 2;
}

/** Registers the client-side commands, speaking to `WEFT_URL` with `WEFT_API_KEY`. */
export function clientCommands(program: Command): void {
  program
    .command('apply')
    .description('publish a workflow definition (YAML or JSON) as a new version')
    .requiredOption('-f, --file <path>', 'definition file')
    .option('--id <workflowId>', 'workflow id (default: the file name without extension)')
    .option('--name <name>', 'display name')
    .action(async (o: { file: string; id?: string; name?: string }) => {
      const definition = await readFile(o.file, 'utf8');
      const workflowId = o.id ?? basename(o.file, extname(o.file));
      const c = client();
      const r = await c.request(
        `mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { workflowId version createdAt warnings { nodeId path message } } }`,
        { i: { workflowId, name: o.name, definition } },
      );
      const { warnings, ...published } = r.publishWorkflow;
      for (const w of warnings as { nodeId: string | null; path: string | null; message: string }[]) {
        process.stderr.write(`weft: warning: ${[w.nodeId, w.path].filter(Boolean).join(' ')}: ${w.message}\n`);
      }
      print(published);
    });

  program
    .command('run <workflowId>')
    .description('start a run')
    .option('--input <json>', 'run input', json('--input'), {})
    .option('--config <json>', 'run config', json('--config'))
    .option('--version <n>', "definition version (default: the workflow's default version)", positiveInt('--version'))
    .option('--idempotency-key <key>', 'return the existing run for a repeated key')
    .option('--watch', 'stream task progress until the run ends')
    .action(async (workflowId: string, o: { input: unknown; config?: unknown; version?: number; idempotencyKey?: string; watch?: boolean }) => {
      const c = client();
      try {
        const r = await c.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id status } }`, {
          i: { workflowId, input: o.input, config: o.config, version: o.version, idempotencyKey: o.idempotencyKey },
        });
        process.stdout.write(`run ${r.startRun.id} ${r.startRun.status}\n`);
        if (o.watch) await watchAndReport(c, r.startRun.id);
      } finally {
        await c.close();
      }
    });

  program
    .command('runs')
    .description('list recent runs, newest first')
    .option('--status <s>', `filter by status (${RUN_STATUSES.join(', ')})`, (v: string) => {
      const up = v.toUpperCase();
      if (!RUN_STATUSES.includes(up)) throw new InvalidArgumentError(`must be one of ${RUN_STATUSES.join(', ')}`);
      return up;
    })
    .option('--workflow <id>', 'filter by workflow')
    .option('--first <n>', 'how many', (v) => Number(v), 20)
    .action(async (o: { status?: string; workflow?: string; first: number }) => {
      const r = await client().request(
        `query($f: RunFilter, $n: Int) { runs(filter: $f, first: $n) { edges { node { id status workflowId version createdAt finishedAt } } } }`,
        { f: { status: o.status, workflowId: o.workflow }, n: o.first },
      );
      for (const { node } of r.runs.edges) process.stdout.write(`${node.id}  ${node.status.padEnd(9)}  ${node.workflowId}@${node.version}  ${node.createdAt}\n`);
    });

  program
    .command('run-status <runId>')
    .description("show a run, its tasks (a for_each node's with its iteration counts), and its parent and child runs")
    .option('--mermaid', 'print the DAG with node statuses as a Mermaid flowchart')
    .action(async (runId: string, o: { mermaid?: boolean }) => {
      const c = client();
      if (o.mermaid) {
        const r = await c.request(`query($id: ID!) { run(id: $id) { mermaid } }`, { id: runId });
        process.stdout.write(`${r.run.mermaid}\n`);
        return;
      }
      const { run } = await c.request(`query($id: ID!) { run(id: $id) { ${RUN_STATUS_FIELDS} } }`, { id: runId });
      const parent = run.parentRunId
        ? (await c.request(`query($id: ID!) { run(id: $id) { id workflowId status } }`, { id: run.parentRunId })).run
        : null;
      print(runStatusView(run, parent));
    });

  program
    .command('signal <runId> <name>')
    .description('send a signal to a run')
    .option('--payload <json>', 'signal payload', json('--payload'))
    .action(async (runId: string, name: string, o: { payload?: unknown }) => {
      const r = await client().request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name, payload: o.payload } });
      process.stdout.write(r.sendSignal.delivered ? 'delivered\n' : 'buffered (no node is waiting for it yet)\n');
    });

  program
    .command('cancel <runId>')
    .description('cancel a run')
    .option('--reason <text>', 'why')
    .action(async (runId: string, o: { reason?: string }) => {
      const r = await client().request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id status } }`, { i: { runId, reason: o.reason } });
      process.stdout.write(`run ${r.cancelRun.id} ${r.cancelRun.status}\n`);
    });

  program
    .command('retry <runId>')
    .description('retry a run from a node (that node and its descendants are reset)')
    .requiredOption('--from <nodeId>', 'node to restart from')
    .option('--input <json>', 'new run input', json('--input'))
    .option('--config <json>', 'new run config', json('--config'))
    .option('--version <n>', "definition version to continue on (default the run's)", positiveInt('--version'))
    .option('--watch', 'stream task progress until the run ends')
    .action(async (runId: string, o: { from: string; input?: unknown; config?: unknown; version?: number; watch?: boolean }) => {
      const c = client();
      try {
        const r = await c.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id status } }`, {
          i: { runId, fromNodeId: o.from, input: o.input, config: o.config, version: o.version },
        });
        process.stdout.write(`run ${r.retryRun.id} ${r.retryRun.status}\n`);
        if (o.watch) await watchAndReport(c, r.retryRun.id);
      } finally {
        await c.close();
      }
    });

  program
    .command('versions <workflowId>')
    .description('list the versions of a workflow, marking the default, the latest and deprecated ones')
    .action(async (workflowId: string) => {
      const r = await client().request(
        `query($id: String!) { workflow(workflowId: $id) { id name latestVersion defaultVersion pinnedVersion
           versions { version createdAt createdBy deprecated } } }`,
        { id: workflowId },
      );
      const w = r.workflow;
      process.stdout.write(`workflow ${w.id}${w.name ? ` (${w.name})` : ''}: ${describeDefault(w)}\n`);
      const rows = w.versions.map((v: { version: number; createdAt: string; createdBy: string | null; deprecated: boolean }) => {
        const marks = [v.version === w.defaultVersion ? 'default' : '', v.version === w.latestVersion ? 'latest' : '', v.deprecated ? 'deprecated' : ''];
        return [String(v.version), v.createdAt, v.createdBy ?? '-', marks.filter(Boolean).join(', ')];
      });
      process.stdout.write(table(['VERSION', 'CREATED', 'CREATED BY', ''], rows));
    });

  program
    .command('default-version <workflowId> [version]')
    .description('show the version new runs use, pin one (admin), or --unpin to follow the latest again')
    .option('--unpin', 'follow the latest version again')
    .action(async (workflowId: string, version: string | undefined, o: { unpin?: boolean }) => {
      if (version !== undefined && o.unpin) throw new InvalidArgumentError('give a version or --unpin, not both');
      const fields = 'id latestVersion defaultVersion pinnedVersion';
      let w: { id: string; defaultVersion: number; pinnedVersion: number | null; latestVersion: number };
      if (version === undefined && !o.unpin) {
        w = (await client().request(`query($id: String!) { workflow(workflowId: $id) { ${fields} } }`, { id: workflowId })).workflow;
      } else {
        const v = version === undefined ? null : positiveInt('version')(version);
        w = (await client().request(`mutation($id: String!, $v: Int) { setDefaultVersion(workflowId: $id, version: $v) { ${fields} } }`, { id: workflowId, v }))
          .setDefaultVersion;
      }
      process.stdout.write(`workflow ${w.id}: ${describeDefault(w)}\n`);
    });

  program
    .command('deprecate <workflowId> <version>')
    .description('deprecate a version (admin): new runs on it are refused, running runs continue')
    .option('--restore', 'undo: allow new runs on the version again')
    .action(async (workflowId: string, version: string, o: { restore?: boolean }) => {
      const r = await client().request(
        `mutation($id: String!, $v: Int!, $d: Boolean!) { deprecateVersion(workflowId: $id, version: $v, deprecated: $d) { workflowId version deprecated } }`,
        { id: workflowId, v: positiveInt('version')(version), d: !o.restore },
      );
      const v = r.deprecateVersion;
      process.stdout.write(`workflow ${v.workflowId} version ${v.version} ${v.deprecated ? 'deprecated: new runs on it are refused' : 'restored: new runs may use it'}\n`);
    });

  const keys = program.command('keys').description("manage the tenant's API keys (admin)");
  keys
    .command('create <name>')
    .description('create an API key; its secret is printed once')
    .requiredOption('--role <role>', `${ROLES.join(', ')}`, role)
    .action(async (name: string, o: { role: string }) => {
      const r = await client().request(`mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id name role keyPrefix createdAt secret } }`, {
        i: { name, role: o.role },
      });
      process.stderr.write('Store the secret now: it cannot be shown again.\n');
      print(r.createApiKey);
    });

  keys
    .command('list')
    .description("list the tenant's API keys (never their secrets)")
    .action(async () => {
      const r = await client().request(`query { apiKeys { id name role keyPrefix createdAt revokedAt } }`);
      const rows = r.apiKeys.map((k: { id: string; name: string; role: string; keyPrefix: string; createdAt: string; revokedAt: string | null }) => [
        k.id,
        k.name,
        k.role,
        `${k.keyPrefix}…`,
        k.createdAt,
        k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
      ]);
      process.stdout.write(table(['ID', 'NAME', 'ROLE', 'PREFIX', 'CREATED', 'STATUS'], rows));
    });

  keys
    .command('revoke <id>')
    .description('revoke an API key: it stops authenticating at once')
    .action(async (id: string) => {
      const r = await client().request(`mutation($id: ID!) { revokeApiKey(id: $id) { id name revokedAt } }`, { id });
      process.stdout.write(`key ${r.revokeApiKey.id} (${r.revokeApiKey.name}) revoked at ${r.revokeApiKey.revokedAt}\n`);
    });
}
