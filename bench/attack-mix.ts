/**
 * A hostile tenant's load on a shared Weft, and a neighbour's latency beside it. Used by
 * `npm run bench:attack` (which measures) and by the tenant attack suite (which checks each
 * attack's outcome). Four attacks run at once, each bounded in count and time:
 *
 * - **responses**: queries of many aliases of `run(id){output tasks{output} history{payload}}`
 *   over a run whose tasks hold large outputs;
 * - **definitions**: publishing a definition of many thousand nodes, again and again;
 * - **connections**: many keys of the tenant opening graphql-ws connections, each subscribed;
 * - **backfills**: backfills over a range of millions of cron times, several in parallel.
 *
 * Every request goes to the Weft API given, which must be on a loopback address.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { WeftApiError, type WeftClient } from '@weft/client';

/** Sizes of the attack; the defaults are the attack as first reported. */
export interface AttackSizes {
  /** Tasks of the run whose outputs the alias query reads. */
  bigTasks: number;
  /** Bytes of each of those tasks' output. */
  outputBytes: number;
  /** Aliases per response query. */
  aliases: number;
  /** Nodes of the published definition. */
  definitionNodes: number;
  /** Keys the tenant mints for connections, and connections opened per key. */
  keys: number;
  connectionsPerKey: number;
  /** Backfills asked for at once, in each round. */
  parallelBackfills: number;
}

export const REPORTED_ATTACK: AttackSizes = {
  bigTasks: 40,
  outputBytes: 900_000,
  aliases: 8,
  definitionNodes: 14_000,
  keys: 10,
  connectionsPerKey: 100,
  parallelBackfills: 8,
};

/** What one attack got: how often it tried, what the API answered, and how it ended. */
export interface AttackOutcome {
  name: 'responses' | 'definitions' | 'connections' | 'backfills';
  attempts: number;
  /** Answers by kind: `ok`, a GraphQL error code, `close <code>`, `error`. */
  answers: Record<string, number>;
  /** The first message of each kind of refusal. */
  samples: Record<string, string>;
  /** Most bytes of one answer that was not refused. */
  largestAnswerBytes: number;
}

/** What the attacks need, as plain data (it crosses to the process that runs them). */
export interface AttackPlan {
  url: string;
  adminKey: string;
  bigRunId: string;
  scheduleId?: string;
  /** Why the schedule could not be made (the backfill attack then does nothing). */
  scheduleRefused?: string;
  keys: string[];
  /** Why minting keys stopped early. */
  keysRefused?: string;
}

/** A tenant's set-up for the attacks: the big run, the schedule, the keys, and the stub. */
export interface PreparedAttack extends AttackPlan {
  stub: Server;
}

/** A loopback HTTP server answering every GET with a JSON object of about `bytes` bytes. */
export async function startBlobServer(bytes: number): Promise<Server> {
  const body = JSON.stringify({ blob: 'x'.repeat(Math.max(0, bytes - 12)) });
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A chain of `n` FORK nodes, in compact JSON (14,000 of them fit in 1 MB). */
export function hugeDefinition(n: number): string {
  const nodes: string[] = [];
  const edges: string[] = [];
  for (let i = 0; i < n; i++) {
    nodes.push(`{"node_id":"n${i}","type":"FORK"}`);
    if (i > 0) edges.push(`{"from":"n${i - 1}","to":"n${i}"}`);
  }
  return `{"nodes":[${nodes.join(',')}],"edges":[${edges.join(',')}]}`;
}

/**
 * Prepares the attacks as tenant `admin`: a run of `sizes.bigTasks` HTTP tasks each answering
 * `sizes.outputBytes` (waited for until it ends), a schedule every minute, and `sizes.keys`
 * viewer keys. Throws when the big run cannot be made.
 */
export async function prepareAttack(url: string, admin: WeftClient, sizes: AttackSizes, timeoutMs = 120_000): Promise<PreparedAttack> {
  const stub = await startBlobServer(sizes.outputBytes);
  const stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  const nodes = [
    { node_id: 'start', type: 'FORK' },
    ...Array.from({ length: sizes.bigTasks }, (_, i) => ({ node_id: `big${i}`, type: 'HTTP', spec: { url: `${stubUrl}/big${i}` } })),
  ];
  const edges = nodes.slice(1).map((n) => ({ from: 'start', to: n.node_id }));
  const definition = { nodes, edges, output: '{{ "done" }}' };
  await admin.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
    i: { workflowId: 'attack-big', definition: JSON.stringify(definition) },
  });
  const started = await admin.request(`mutation { startRun(input: {workflowId: "attack-big"}) { id } }`);
  const bigRunId: string = started.startRun.id;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await admin.request(`query($id: ID!) { run(id: $id) { status error } }`, { id: bigRunId });
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(r.run.status)) break;
    if (Date.now() > until) throw new Error(`the attack's big run ${bigRunId} did not end within ${timeoutMs} ms (${r.run.status})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const prepared: PreparedAttack = { url, adminKey: admin.apiKey!, bigRunId, keys: [], stub };
  try {
    const s = await admin.request(
      `mutation { createSchedule(input: {workflowId: "attack-big", cron: "* * * * *", paused: false, overlapPolicy: BUFFER_ALL}) { id } }`,
    );
    prepared.scheduleId = s.createSchedule.id;
    // Paused at once: the attack is the backfill's refusal, not the fires.
    await admin.request(`mutation($id: ID!) { pauseSchedule(id: $id) { id } }`, { id: prepared.scheduleId });
  } catch (err) {
    prepared.scheduleRefused = (err as Error).message;
  }
  for (let i = 0; i < sizes.keys; i++) {
    try {
      const k = await admin.request(`mutation($n: String!) { createApiKey(input: {name: $n, role: viewer}) { secret } }`, { n: `attack-${i}` });
      prepared.keys.push(k.createApiKey.secret);
    } catch (err) {
      prepared.keysRefused = (err as Error).message;
      break;
    }
  }
  return prepared;
}

function outcome(name: AttackOutcome['name']): AttackOutcome {
  return { name, attempts: 0, answers: {}, samples: {}, largestAnswerBytes: 0 };
}

function count(o: AttackOutcome, kind: string, message?: string): void {
  o.answers[kind] = (o.answers[kind] ?? 0) + 1;
  if (message !== undefined && o.samples[kind] === undefined) o.samples[kind] = message.slice(0, 300);
}

function errorKind(err: unknown): { kind: string; message: string } {
  if (err instanceof WeftApiError) return { kind: String(err.errors[0]?.extensions?.code ?? 'GRAPHQL_ERROR'), message: err.message };
  return { kind: 'error', message: (err as Error).message };
}

/** One POST, answering the response's size and its first error, without parsing the body twice. */
async function post(
  url: string,
  key: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ bytes: number; error?: { kind: string; message: string } }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  let body: { errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = JSON.parse(text);
  } catch {
    return { bytes: text.length, error: { kind: `http ${res.status}`, message: text.slice(0, 200) } };
  }
  const e = body.errors?.[0];
  return e ? { bytes: text.length, error: { kind: String(e.extensions?.code ?? 'GRAPHQL_ERROR'), message: e.message } } : { bytes: text.length };
}

/** Loops `attempt` until `deadline` or `maxAttempts`, with `parallel` loops at once. */
async function loop(deadline: number, maxAttempts: number, parallel: number, attempt: () => Promise<void>): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (Date.now() < deadline && started < maxAttempts) {
        started++;
        await attempt();
      }
    }),
  );
}

async function responsesAttack(p: AttackPlan, key: string, sizes: AttackSizes, deadline: number): Promise<AttackOutcome> {
  const o = outcome('responses');
  const fields = Array.from({ length: sizes.aliases }, (_, i) => `a${i}: run(id: $id) { output tasks { output } history { payload } }`).join('\n');
  await loop(deadline, 40, 2, async () => {
    o.attempts++;
    try {
      const r = await post(p.url, key, `query($id: ID!) { ${fields} }`, { id: p.bigRunId });
      if (r.error) count(o, r.error.kind, r.error.message);
      else {
        count(o, 'ok');
        o.largestAnswerBytes = Math.max(o.largestAnswerBytes, r.bytes);
      }
    } catch (err) {
      const e = errorKind(err);
      count(o, e.kind, e.message);
    }
  });
  return o;
}

async function definitionsAttack(p: AttackPlan, key: string, sizes: AttackSizes, deadline: number): Promise<AttackOutcome> {
  const o = outcome('definitions');
  const definition = hugeDefinition(sizes.definitionNodes);
  await loop(deadline, 40, 4, async () => {
    o.attempts++;
    const r = await post(p.url, key, `mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
      i: { workflowId: 'attack-huge', definition },
    });
    if (r.error) count(o, r.error.kind, r.error.message);
    else count(o, 'ok');
  });
  return o;
}

async function backfillsAttack(p: AttackPlan, key: string, sizes: AttackSizes, deadline: number): Promise<AttackOutcome> {
  const o = outcome('backfills');
  if (!p.scheduleId) {
    count(o, 'no schedule', p.scheduleRefused);
    return o;
  }
  // Twenty years of a cron every minute: over ten million nominal times.
  const vars = { id: p.scheduleId, from: '2000-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' };
  await loop(deadline, 200, sizes.parallelBackfills, async () => {
    o.attempts++;
    const r = await post(p.url, key, `mutation($id: ID!, $from: DateTime!, $to: DateTime!) { backfillSchedule(id: $id, from: $from, to: $to) { id } }`, vars);
    if (r.error) count(o, r.error.kind, r.error.message);
    else count(o, 'ok');
  });
  return o;
}

/**
 * Opens `keys × connectionsPerKey` graphql-ws connections (each subscribed to `runChanged` once
 * acknowledged) and holds them until `deadline`; counts acknowledgements and closes by code.
 */
async function connectionsAttack(p: AttackPlan, sizes: AttackSizes, deadline: number): Promise<AttackOutcome> {
  const o = outcome('connections');
  const wsUrl = p.url.replace(/^http/, 'ws');
  const sockets: WebSocket[] = [];
  /** Opens one connection; resolves once it is acknowledged or closed. */
  const open = (key: string) =>
    new Promise<void>((resolve) => {
      o.attempts++;
      const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
      sockets.push(ws);
      let acked = false;
      ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } })));
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as { type: string };
        if (msg.type === 'connection_ack' && !acked) {
          acked = true;
          count(o, 'ok');
          ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { runChanged { runId status } }' } }));
          resolve();
        }
      });
      ws.on('close', (code, reason) => {
        if (!acked) count(o, `close ${code}`, reason.toString());
        resolve();
      });
      ws.on('error', () => undefined);
    });
  // Up to 8 connections being set up at once: under the cap of unauthenticated ones per address,
  // as a client pool on one host would stay.
  const wanted = p.keys.flatMap((key) => Array.from({ length: sizes.connectionsPerKey }, () => key));
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let key = wanted.shift(); key !== undefined && Date.now() < deadline; key = wanted.shift()) {
        await Promise.race([open(key), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())))]);
      }
    }),
  );
  const wait = deadline - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          ws.once('close', () => resolve());
          ws.terminate();
        }),
    ),
  );
  return o;
}

export const ATTACK_NAMES: AttackOutcome['name'][] = ['responses', 'definitions', 'connections', 'backfills'];

/**
 * Runs the attacks named in `only` (default: all four) at once until `seconds` have passed (each
 * stops by itself by then).
 */
export async function runAttacks(p: AttackPlan, sizes: AttackSizes, seconds: number, only: AttackOutcome['name'][] = ATTACK_NAMES): Promise<AttackOutcome[]> {
  const deadline = Date.now() + seconds * 1000;
  const adminKey = p.adminKey;
  const attacks: Record<AttackOutcome['name'], () => Promise<AttackOutcome>> = {
    responses: () => responsesAttack(p, p.keys[0] ?? adminKey, sizes, deadline),
    definitions: () => definitionsAttack(p, adminKey, sizes, deadline),
    connections: () => connectionsAttack(p, sizes, deadline),
    backfills: () => backfillsAttack(p, adminKey, sizes, deadline),
  };
  return Promise.all(only.map((name) => attacks[name]()));
}

/** Latencies, in ms, of the neighbour's `whoami` and small `runs` queries, one after another. */
export async function neighbourLatencies(url: string, key: string, seconds: number, maxRequests = 2_000): Promise<{ ms: number[]; failures: string[] }> {
  const ms: number[] = [];
  const failures: string[] = [];
  const deadline = Date.now() + seconds * 1000;
  for (let i = 0; i < maxRequests && Date.now() < deadline; i++) {
    const query = i % 2 === 0 ? '{ whoami { tenantId role } }' : '{ runs(first: 5) { edges { node { id status } } } }';
    const t0 = performance.now();
    try {
      const r = await post(url, key, query);
      if (r.error) failures.push(`${r.error.kind}: ${r.error.message}`);
    } catch (err) {
      failures.push((err as Error).message);
    }
    ms.push(performance.now() - t0);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { ms, failures };
}

/** The `q` quantile (0–1) of `values`, nearest rank. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Closes what {@link prepareAttack} opened. */
export async function closeAttack(p: PreparedAttack): Promise<void> {
  await new Promise<void>((resolve) => p.stub.close(() => resolve()));
}

/**
 * Whether tenant `key` can open a graphql-ws connection and subscribe: `ack`, or the close code
 * and reason it got instead (`timeout` after `timeoutMs`).
 */
export async function neighbourConnects(url: string, key: string, timeoutMs = 20_000): Promise<string> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  ws.on('error', () => undefined);
  const answer = await new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), timeoutMs);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } })));
    ws.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'connection_ack') {
        clearTimeout(timer);
        resolve('ack');
      }
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve(`close ${code} ${reason.toString()}`.trim());
    });
  });
  ws.terminate();
  return answer;
}
