/**
 * `npm run demo`: starts Weft (`weft dev` in a child process), creates the tenant `demo` (or, on
 * a database an earlier demo used, gives that tenant a new key and revokes the older ones), publishes
 * examples/order-flow.yaml, runs a small order (ships at once) and a large order (waits for the
 * signal `approve-<order_id>`, which the demo sends), streams both runs' progress from the
 * `runUpdated` subscription, prints each task's final status and the outputs, and exits 0 only
 * when both orders shipped. It prints the web console's address and the tenant's key first;
 * with `--stay` it keeps the platform up after the orders (until Ctrl-C) to look at them there.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { WeftClient } from '@weft/client';
import { startOrderService } from './order-service.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const cli = join(root, 'dist/apps/cli/src/main.js');
const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
const STAY = process.argv.includes('--stay');

const RUN = `id status output error tasks { nodeId status attempt output error awaitedSignal }`;

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/**
 * Starts `weft dev`; resolves its GraphQL URL and the database URL it printed (its embedded
 * PostgreSQL's when no PostgreSQL answered, which the admin command must be pointed at).
 */
async function startWeft(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string; databaseUrl?: string }> {
  const child = spawn(process.execPath, [cli, 'dev', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft dev did not start within 60 s:\n${log}`)), 60_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      const m = log.match(/Weft GraphQL API: (\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`weft dev exited with ${code}:\n${log}`));
    });
  });
  child.stdout!.on('data', (c: Buffer) => process.env.DEMO_VERBOSE && process.stdout.write(c));
  child.stderr!.on('data', (c: Buffer) => process.stderr.write(c));
  for (const line of log.split('\n').filter((l) => /^Weft (database|transport): /.test(l))) say(line);
  return { child, url, databaseUrl: /^Weft database: (\S+)/m.exec(log)?.[1] };
}

/** The demo's tenant: created by the first demo on a database, reused by the next ones. */
const DEMO_TENANT = 'demo';

/** Runs `weft <args>` and resolves the last line of its output, parsed as JSON. */
async function weftJson(env: NodeJS.ProcessEnv, ...args: string[]): Promise<any> {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args], { env });
  return args.includes('-o') ? JSON.parse(stdout) : JSON.parse(stdout.trim().split('\n').pop()!);
}

/**
 * The tenant `demo` with a new admin key named `demo`: a tenant name is unique, so a second demo
 * on the same database gives the tenant the first one created a fresh key instead of failing.
 */
async function demoTenant(env: NodeJS.ProcessEnv): Promise<{ tenantId: string; apiKey: string; keyId: string; reused: boolean }> {
  for (;;) {
    const tenants: { id: string; name: string }[] = await weftJson(env, 'admin', 'tenants', '-o', 'json');
    const found = tenants.find((t) => t.name.toLowerCase() === DEMO_TENANT);
    if (found) {
      const key = await weftJson(env, 'admin', 'create-key', '--tenant', found.id, '--role', 'admin', '--name', DEMO_TENANT);
      return { tenantId: found.id, apiKey: key.apiKey, keyId: key.keyId, reused: true };
    }
    try {
      // Its first key named `demo` too, so that the next demo revokes it (revokeOlderDemoKeys).
      const created = await weftJson(env, 'admin', 'create-tenant', DEMO_TENANT, '--key-name', DEMO_TENANT, '-o', 'json');
      return { tenantId: created.tenantId, apiKey: created.apiKey, keyId: created.keyId, reused: false };
    } catch (err) {
      // Exit code 4: another demo created it in between; take it as the next one would.
      if ((err as { code?: unknown }).code !== 4) throw err;
    }
  }
}

/** Revokes the keys earlier demos gave the tenant (named `demo`, not `keep`), so that the tenant's cap on live keys is never reached. */
async function revokeOlderDemoKeys(client: WeftClient, keep: string): Promise<void> {
  const { apiKeys } = await client.request(`{ apiKeys { id name revokedAt } }`);
  for (const k of apiKeys as { id: string; name: string; revokedAt: string | null }[]) {
    if (k.name === DEMO_TENANT && k.id !== keep && !k.revokedAt) await client.request(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: k.id });
  }
}

async function main(): Promise<number> {
  const shop = await startOrderService();
  say(`demo order service at ${shop.url}`);
  const env = { ...process.env, WEFT_HTTP_ALLOW_PRIVATE: '1', WEFT_LOG_LEVEL: process.env.WEFT_LOG_LEVEL ?? 'warn' };
  const { child, url, databaseUrl } = await startWeft(env);
  say(`Weft is up: ${url}`);
  try {
    // `weft admin` reaches the database directly: the one weft dev chose (its embedded one, say).
    const adminEnv = databaseUrl ? { ...env, DATABASE_URL: databaseUrl } : env;
    const { tenantId, apiKey, keyId, reused } = await demoTenant(adminEnv);
    say(reused ? `tenant ${DEMO_TENANT} (${tenantId}) reused, with a new key` : `tenant ${DEMO_TENANT} (${tenantId}) created`);
    const lasts = STAY ? 'it stays up after the runs until Ctrl-C' : 'it stops when the demo ends, unless you run `npm run demo -- --stay`';
    say(`web console: ${new URL(url).origin}/ (sign in with the API key ${apiKey}; ${lasts})`);
    const client = new WeftClient(url, apiKey);
    await revokeOlderDemoKeys(client, keyId);
    // Another Weft worker on this database and Redis (a `weft dev` left running, say) takes the
    // demo's tasks too, and without WEFT_HTTP_ALLOW_PRIVATE it refuses the order service's
    // loopback address: say so before anything fails for it.
    const { workers } = await client.request(`{ workers { id queues } }`);
    const others = (workers as { queues: string[] }[]).filter((w) => w.queues.includes('http')).length - 1;
    if (others > 0) {
      say(
        `warning: ${others} other Weft worker(s) serve the queue "http" of this database (see \`weft admin workers\`): ` +
          "they may take the demo's tasks, and unless they run with WEFT_HTTP_ALLOW_PRIVATE=1 they refuse the order service on 127.0.0.1. " +
          'Stop them (Ctrl-C the other `weft dev`) if a task fails with "refused to connect to 127.0.0.1".',
      );
    }

    const definition = await readFile(join(root, 'examples/order-flow.yaml'), 'utf8');
    const published = await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { workflowId version } }`, {
      i: { workflowId: 'order-flow', name: 'Order flow', definition },
    });
    say(`published order-flow version ${published.publishWorkflow.version}`);

    const orders = [
      { label: 'small order', order_id: '1001' },
      { label: 'large order', order_id: '2001' },
    ];
    const finals = await Promise.all(
      orders.map(async (o) => {
        const started = await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id status } }`, {
          i: { workflowId: 'order-flow', input: { order_id: o.order_id }, config: { shop_url: shop.url } },
        });
        const runId: string = started.startRun.id;
        say(`[${o.label}] run ${runId} started`);
        const seen = new Map<string, string>();
        let signalled = false;
        let last: any;
        await client.subscribe(`subscription($id: ID!) { runUpdated(runId: $id) { ${RUN} } }`, { id: runId }, (data: any) => {
          last = data.runUpdated;
          for (const t of last.tasks) {
            const key = `${t.status}#${t.attempt}`;
            if (seen.get(t.nodeId) === key) continue;
            seen.set(t.nodeId, key);
            say(`[${o.label}] ${t.nodeId.padEnd(11)} ${t.status}${t.awaitedSignal ? ` (waiting for "${t.awaitedSignal}")` : ''}`);
            if (t.status === 'WAITING' && t.awaitedSignal && !signalled) {
              signalled = true;
              say(`[${o.label}] manager approves: sending signal "${t.awaitedSignal}"`);
              void client
                .request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, {
                  i: { runId, name: t.awaitedSignal, payload: { approved_by: 'demo-manager' } },
                })
                .then((r) => say(`[${o.label}] signal ${r.sendSignal.delivered ? 'delivered' : 'buffered'}`));
            }
          }
          if (TERMINAL.includes(last.status)) say(`[${o.label}] run ${last.status}`);
          return !TERMINAL.includes(last.status);
        }).done;
        const final = await client.request(`query($id: ID!) { run(id: $id) { ${RUN} } }`, { id: runId });
        return { ...o, run: final.run };
      }),
    );
    await client.close();

    let ok = true;
    for (const f of finals) {
      say(`\n== ${f.label} (order ${f.order_id}): run ${f.run.status}`);
      for (const t of f.run.tasks) say(`  ${t.nodeId.padEnd(11)} ${t.status.padEnd(9)} ${JSON.stringify(t.output ?? t.error ?? null)}`);
      const shipped = f.run.tasks.find((t: any) => t.nodeId === 'ship')?.output?.shipped === true;
      say(`  shipped: ${shipped}`);
      ok &&= shipped && f.run.status === 'SUCCEEDED';
    }
    if (STAY) {
      say(`\nthe platform stays up: open ${new URL(url).origin}/ and sign in with ${apiKey}; Ctrl-C to stop`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    } else {
      say(`\nto look at these runs in the web console, run \`npm run demo -- --stay\``);
    }
    return ok ? 0 : 1;
  } finally {
    // weft dev stops its embedded PostgreSQL (if it started one) before it exits: wait for that.
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    shop.server.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
