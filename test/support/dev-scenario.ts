/**
 * `weft dev` with nothing but Node.js, driven from inside a network namespace where nothing
 * listens (test/e2e/dev-without-services.e2e-spec.ts runs this file under `unshare --net`):
 *
 * 1. starts `weft dev` with WEFT_HOME = argv[2], without DATABASE_URL or REDIS_URL, and reads the
 *    database URL and the transport it prints;
 * 2. creates a tenant (`weft admin create-tenant` on that URL; and `Café`, then `CAFÉ`, which the
 *    server must refuse as the same name), publishes a workflow whose one node
 *    is Python CODE, starts a run and follows it over the `runUpdated` subscription to its end;
 * 3. starts a second run whose CODE node naps, and SIGKILLs `weft dev` while it runs (its job in
 *    process memory is lost; its embedded PostgreSQL is left running, as after a crash);
 * 4. starts `weft dev` again over the same folder, reads the first run back, follows the second
 *    until the lease sweep has brought it back and it ended, and stops `weft dev` with SIGTERM;
 * 5. starts `weft dev` a third time and sends it SIGHUP, as closing its terminal does;
 * 6. prints one JSON line with what it saw (the test asserts on it).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { WeftClient } from '@weft/client';

const root = fileURLToPath(new URL('../../', import.meta.url));
const home = process.argv[2]!;
const node = [process.execPath, '--import', join(root, 'test/support/ts-register.mjs'), join(root, 'apps/cli/src/main.ts')];
// A 6 s run lease (heartbeats every 2 s) instead of the default 15 s: the crashed process's nap is
// swept back that much sooner after the restart, by the same sweep.
const env: NodeJS.ProcessEnv = { ...process.env, WEFT_HOME: home, WEFT_LOG_LEVEL: 'info', WEFT_LOG_FORMAT: 'json', WEFT_RUN_LEASE_MS: '6000' };
for (const k of ['DATABASE_URL', 'DATABASE_OWNER_URL', 'REDIS_URL', 'PORT', 'WEFT_METRICS_PORT']) delete env[k];

// The run waits for a signal first, which the scenario sends once the subscription showed it
// waiting: the updates after that can only have come over the subscription.
const DEFINITION = `
nodes:
  - node_id: gate
    name: Gate
    type: WAIT_FOR_EVENT
    spec: {event: go, timeout_seconds: 600}
  - node_id: square
    name: Square
    type: CODE
    runtime: python
    spec:
      code: |
        def handler(input):
            return {"square": input["n"] * input["n"]}
      n: "{{input.n}}"
edges:
  - {from: gate, to: square}
`;

interface Dev {
  child: ChildProcess;
  out: string;
  api: string;
  database: string;
  transport: string;
}

async function startDev(): Promise<Dev> {
  const child = spawn(node[0]!, [...node.slice(1), 'dev', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const dev = { child, out: '' } as Dev;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft dev did not start within 120 s:\n${dev.out}`)), 120_000);
    const onData = (chunk: Buffer) => {
      dev.out += chunk.toString();
      const api = /^Weft GraphQL API: (\S+)/m.exec(dev.out);
      if (!api) return;
      dev.api = api[1]!;
      dev.database = /^Weft database: (.*)$/m.exec(dev.out)?.[1] ?? '';
      dev.transport = /^Weft transport: (.*)$/m.exec(dev.out)?.[1] ?? '';
      clearTimeout(timer);
      resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`weft dev exited (${code ?? signal}) before it served:\n${dev.out}`));
    });
  });
  return dev;
}

function exited(child: ChildProcess): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
}

const NAP = `
nodes:
  - node_id: nap
    name: Nap
    type: CODE
    runtime: python
    spec:
      code: |
        import time
        def handler(input):
            time.sleep(3)
            return {"rested": True}
`;

const RUN = 'id status output error tasks { nodeId status output awaitedSignal }';

async function main(): Promise<Record<string, unknown>> {
  const first = await startDev();
  const databaseUrl = first.database.split(' ')[0]!;
  const { stdout } = await promisify(execFile)(node[0]!, [...node.slice(1), 'admin', 'create-tenant', 'devless'], {
    env: { ...env, DATABASE_URL: databaseUrl },
  });
  const { apiKey } = JSON.parse(stdout.trim().split('\n').pop()!) as { apiKey: string };
  // Tenant names compare case-insensitively beyond ASCII on the embedded server too.
  const createTenant = (name: string) =>
    promisify(execFile)(node[0]!, [...node.slice(1), 'admin', 'create-tenant', name], { env: { ...env, DATABASE_URL: databaseUrl } }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? '' }),
    );
  const names = { cafe: await createTenant('Café'), upper: await createTenant('CAFÉ') };
  let client = new WeftClient(first.api, apiKey);
  await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
    i: { workflowId: 'square', name: 'Square', definition: DEFINITION },
  });
  const started = await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: 'square', input: { n: 7 } } });
  const runId: string = started.startRun.id;
  const seen: string[] = [];
  let signalled = false;
  type Payload = { runUpdated: { status: string; tasks: { nodeId: string; status: string; awaitedSignal: string | null }[] } };
  await client.subscribe(`subscription($id: ID!) { runUpdated(runId: $id) { ${RUN} } }`, { id: runId }, (data: Payload) => {
    const run = data.runUpdated;
    seen.push(`${run.status} ${run.tasks.map((t) => `${t.nodeId}:${t.status}`).join(',')}`);
    if (!signalled && run.tasks.some((t) => t.awaitedSignal === 'go')) {
      signalled = true;
      void client.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name: 'go', payload: {} } });
    }
    return !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(run.status);
  }).done;
  const final = (await client.request(`query($id: ID!) { run(id: $id) { ${RUN} } }`, { id: runId })).run;

  // A run whose task is running when weft dev dies.
  await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
    i: { workflowId: 'nap', name: 'Nap', definition: NAP },
  });
  const napId: string = (await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: 'nap', input: {} } })).startRun
    .id;
  await client.subscribe(
    `subscription($id: ID!) { runUpdated(runId: $id) { ${RUN} } }`,
    { id: napId },
    (data: Payload) => !data.runUpdated.tasks.some((t) => t.status === 'RUNNING'),
  ).done;
  await client.close();

  // A crash: the embedded PostgreSQL outlives its weft dev.
  const pidFile = join(home, 'dev-postgres', 'postmaster.pid');
  const orphan = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  first.child.kill('SIGKILL');
  await exited(first.child);
  const orphanAlive = existsSync(`/proc/${orphan}`);

  const second = await startDev();
  client = new WeftClient(second.api, apiKey);
  const again = (await client.request(`query($id: ID!) { run(id: $id) { ${RUN} } }`, { id: runId })).run;
  // The nap's job died with the first process; its lease expires and the sweep dispatches it again.
  let nap: { status: string };
  for (;;) {
    nap = (await client.request(`query($id: ID!) { run(id: $id) { ${RUN} } }`, { id: napId })).run;
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(nap.status)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await client.close();
  const serverPid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  second.child.kill('SIGTERM');
  const code = await exited(second.child);
  const serverGone = !existsSync(`/proc/${serverPid}`);
  const pidFileGone = !existsSync(pidFile);

  // A closed terminal: SIGHUP must stop the server too, not leave it orphaned.
  const third = await startDev();
  const thirdPid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  third.child.kill('SIGHUP');
  const hupCode = await exited(third.child);
  return {
    first: { database: first.database, transport: first.transport, out: first.out, names },
    seen,
    final,
    crash: { orphanAlive, orphanGone: !existsSync(`/proc/${orphan}`) },
    second: { database: second.database, transport: second.transport, run: again, nap, out: second.out, exit: code, serverGone, pidFileGone },
    hangup: { out: third.out, exit: hupCode, serverGone: !existsSync(`/proc/${thirdPid}`), pidFileGone: !existsSync(pidFile) },
  };
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`dev scenario failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
