/**
 * The chaos workflow and what each run of it must end with.
 *
 *   start (FORK) ─┬─ fetch (HTTP, retries) ── approval (WAIT_FOR_EVENT "go-<key>") ── seal (CODE js)
 *                 ├─ pause (WAIT input.wait seconds)
 *                 └─ ping (HTTP, retries) ── tally (CODE python)
 *   join (JOIN) ← seal, pause, tally
 *   route (SWITCH) ─┬─ left  (HTTP POST, when input.path == 'left')
 *                   └─ right (HTTP POST, when input.path == 'right')
 *   finish (HTTP) ← left, right   (one of them is skipped; finish runs after the other)
 *
 * Every HTTP node calls the stub at `<config.stub>/hit/<input.key>/<node>?fail=<n>`: the stub
 * fails the first `n` hits of that (run key, node) and succeeds afterwards. `n` is at most
 * {@link MAX_STUB_FAILURES}, well below `max_attempts`, so every run is expected to SUCCEED —
 * any other outcome is a failure the engine caused.
 *
 * The CODE nodes transform their predecessors' outputs, so their outputs are functions of the
 * run's plan ({@link expectedCodeOutput}), and each forks a child process inside its sandbox that
 * sleeps first (0.5 s, 1 s), so that worker kills land while sandboxed processes exist. They have
 * no retries: nothing in a run makes an attempt fail by design (an execution lost with its
 * worker or its job runs the same attempt again), so any failure is the platform's.
 */
import { createHash } from 'node:crypto';
import { intOf, unit } from './rng.js';

export const WORKFLOW_ID = 'chaos-mixed';
export const HTTP_NODES = ['fetch', 'ping', 'left', 'right', 'finish'] as const;
export type HttpNode = (typeof HTTP_NODES)[number];
export const MAX_ATTEMPTS = 6;
export const MAX_STUB_FAILURES = 2;
/** Backoff of the HTTP nodes' retries: 0.2 s, 0.4 s, 0.8 s, … */
export const BACKOFF_SECONDS = 0.2;
export const CODE_NODES = ['seal', 'tally'] as const;
export type CodeNode = (typeof CODE_NODES)[number];

/**
 * `seal` (JavaScript): joins the run key and the signal's token in a `/bin/sh` child that first
 * sleeps 0.5 s, then hashes that with what `fetch` returned.
 */
const SEAL_JS = `const { createHash } = require('node:crypto');
const { execFileSync } = require('node:child_process');

function handler(input) {
  const joined = execFileSync('/bin/sh', ['-c', 'sleep 0.5; printf "%s:%s" "$1" "$2"', 'sh', input.key, input.token], { encoding: 'utf8' });
  return {
    node: 'seal',
    key: input.key,
    joined,
    reversed: input.token.split('').reverse().join(''),
    digest: createHash('sha256').update(joined + '/' + input.fetched.node + '/' + input.fetched.key).digest('hex').slice(0, 16),
  };
}
`;

/** `tally` (Python): upper-cases the run key in a shell child that first sleeps 1 s, and hashes what `ping` returned. */
const TALLY_PY = `import hashlib
import subprocess


def handler(input):
    upper = subprocess.run(
        ["sh", "-c", 'sleep 1; printf %s "$1" | tr a-z A-Z', "sh", input["key"]],
        capture_output=True, text=True, check=True,
    ).stdout
    ping = input["ping"]
    return {
        "node": "tally",
        "key": input["key"],
        "upper": upper,
        "digest": hashlib.sha256((ping["key"] + "/" + ping["node"]).encode()).hexdigest()[:16],
        "wait_ms": round(input["wait"] * 1000),
    }
`;

/** The definition published once per chaos run (JSON). */
export function definition(): Record<string, unknown> {
  const retry = { max_attempts: MAX_ATTEMPTS, backoff_seconds: BACKOFF_SECONDS };
  const hit = (node: HttpNode) => `{{config.stub}}/hit/{{input.key}}/${node}?fail={{input.fail.${node}}}`;
  return {
    name: 'Chaos: mixed workflow',
    nodes: [
      { node_id: 'start', type: 'FORK' },
      { node_id: 'fetch', type: 'HTTP', retry, spec: { url: hit('fetch'), method: 'GET', timeout_seconds: 10 } },
      { node_id: 'approval', type: 'WAIT_FOR_EVENT', spec: { event: 'go-{{input.key}}', timeout_seconds: 3600 } },
      { node_id: 'pause', type: 'WAIT', spec: { duration_seconds: '{{input.wait}}' } },
      { node_id: 'ping', type: 'HTTP', retry, spec: { url: hit('ping'), method: 'GET', timeout_seconds: 10 } },
      {
        node_id: 'seal',
        type: 'CODE',
        runtime: 'js',
        spec: { code: SEAL_JS, key: '{{input.key}}', token: '{{tasks.approval.output.token}}', fetched: '{{tasks.fetch.output}}' },
      },
      {
        node_id: 'tally',
        type: 'CODE',
        runtime: 'python',
        spec: { code: TALLY_PY, key: '{{input.key}}', wait: '{{input.wait}}', ping: '{{tasks.ping.output}}' },
      },
      { node_id: 'join', type: 'JOIN' },
      { node_id: 'route', type: 'SWITCH' },
      {
        node_id: 'left',
        type: 'HTTP',
        retry,
        spec: { url: hit('left'), method: 'POST', body: { token: '{{tasks.approval.output.token}}' }, timeout_seconds: 10 },
      },
      {
        node_id: 'right',
        type: 'HTTP',
        retry,
        spec: { url: hit('right'), method: 'POST', body: { token: '{{tasks.approval.output.token}}' }, timeout_seconds: 10 },
      },
      { node_id: 'finish', type: 'HTTP', retry, spec: { url: hit('finish'), method: 'GET', timeout_seconds: 10 } },
    ],
    edges: [
      { from: 'start', to: 'fetch' },
      { from: 'start', to: 'pause' },
      { from: 'start', to: 'ping' },
      { from: 'fetch', to: 'approval' },
      { from: 'approval', to: 'seal' },
      { from: 'seal', to: 'join' },
      { from: 'pause', to: 'join' },
      { from: 'ping', to: 'tally' },
      { from: 'tally', to: 'join' },
      { from: 'join', to: 'route' },
      { from: 'route', to: 'left', condition: "{{input.path == 'left'}}" },
      { from: 'route', to: 'right', condition: "{{input.path == 'right'}}" },
      { from: 'left', to: 'finish' },
      { from: 'right', to: 'finish' },
    ],
    output: { key: '{{input.key}}', token: '{{tasks.approval.output.token}}', finish: '{{tasks.finish.output}}' },
  };
}

/** What the driver does with one run, all derived from (seed, index). */
export interface RunPlan {
  index: number;
  /** The run's key in the stub and its idempotency key's suffix. */
  key: string;
  path: 'left' | 'right';
  /** Seconds the WAIT node sleeps. */
  wait: number;
  /** Stub failures before success, per HTTP node. */
  fail: Record<HttpNode, number>;
  /** `early`: the signal is sent right after startRun (before the node parks, buffered); `late`: once the node is WAITING. */
  signal: 'early' | 'late';
  /** Pause before sending the signal (after startRun for early, after seeing WAITING for late), ms. */
  signalDelayMs: number;
  /** The signal payload's token, expected back as the run output's token. */
  token: string;
}

export function planRun(seed: number, index: number): RunPlan {
  const key = `r${index}`;
  const fail = Object.fromEntries(HTTP_NODES.map((n) => [n, intOf(0, MAX_STUB_FAILURES, seed, 'fail', key, n)])) as Record<HttpNode, number>;
  const signal = unit(seed, 'signal', key) < 0.5 ? 'early' : 'late';
  return {
    index,
    key,
    path: unit(seed, 'path', key) < 0.5 ? 'left' : 'right',
    wait: Math.round((0.2 + 0.8 * unit(seed, 'wait', key)) * 100) / 100,
    fail,
    signal,
    signalDelayMs: signal === 'early' ? intOf(0, 150, seed, 'signal-delay', key) : intOf(0, 600, seed, 'signal-delay', key),
    token: `t${hash6(seed, key)}`,
  };
}

function hash6(seed: number, key: string): string {
  return intOf(0, 0xffffff, seed, 'token', key).toString(16).padStart(6, '0');
}

/** The run's input. */
export function runInput(plan: RunPlan): Record<string, unknown> {
  return { key: plan.key, path: plan.path, wait: plan.wait, fail: plan.fail };
}

/** A run as the driver reads it. */
export interface ObservedRun {
  id: string;
  status: string;
  error?: string | null;
  output?: any;
  tasks: { nodeId: string; status: string; attempt: number; output?: any; error?: string | null }[];
}

/**
 * Why a finished run is not what its plan says it must be (undefined when it is): it must have
 * SUCCEEDED, taken its planned branch (the other one SKIPPED), consumed the signal's token and
 * produced the expected output.
 */
export function unexpectedOutcome(plan: RunPlan, run: ObservedRun): string | undefined {
  if (run.status !== 'SUCCEEDED') return `run ${run.status}${run.error ? `: ${run.error}` : ''}`;
  const t = new Map(run.tasks.map((x) => [x.nodeId, x]));
  const other = plan.path === 'left' ? 'right' : 'left';
  for (const n of ['start', 'fetch', 'approval', 'seal', 'pause', 'ping', 'tally', 'join', 'route', plan.path, 'finish']) {
    if (t.get(n)?.status !== 'COMPLETED') return `task ${n} is ${t.get(n)?.status ?? 'missing'}`;
  }
  if (t.get(other)?.status !== 'SKIPPED') return `task ${other} is ${t.get(other)?.status ?? 'missing'}, expected SKIPPED`;
  const branch = t.get(plan.path)!.output;
  if (branch?.token !== plan.token || branch?.node !== plan.path) return `task ${plan.path} output ${JSON.stringify(branch)}`;
  const o = run.output;
  if (o?.key !== plan.key || o?.token !== plan.token || o?.finish?.node !== 'finish' || o?.finish?.key !== plan.key) {
    return `run output ${JSON.stringify(o)}`;
  }
  return undefined;
}

/** The output CODE node `node` must have produced in the run of `plan` (see the node's code above). */
export function expectedCodeOutput(plan: RunPlan, node: CodeNode): Record<string, unknown> {
  const sha16 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
  switch (node) {
    case 'seal': {
      const joined = `${plan.key}:${plan.token}`;
      return { node, key: plan.key, joined, reversed: [...plan.token].reverse().join(''), digest: sha16(`${joined}/fetch/${plan.key}`) };
    }
    case 'tally':
      return { node, key: plan.key, upper: plan.key.toUpperCase(), digest: sha16(`${plan.key}/ping`), wait_ms: Math.round(plan.wait * 1000) };
  }
}
