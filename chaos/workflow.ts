/**
 * The chaos workflow and what each run of it must end with.
 *
 *   start (FORK) ─┬─ fetch (HTTP, retries) ── approval (WAIT_FOR_EVENT "go-<key>")
 *                 ├─ pause (WAIT input.wait seconds)
 *                 └─ ping (HTTP, retries)
 *   join (JOIN) ← approval, pause, ping
 *   route (SWITCH) ─┬─ left  (HTTP POST, when input.path == 'left')
 *                   └─ right (HTTP POST, when input.path == 'right')
 *   finish (HTTP) ← left, right   (one of them is skipped; finish runs after the other)
 *
 * Every HTTP node calls the stub at `<config.stub>/hit/<input.key>/<node>?fail=<n>`: the stub
 * fails the first `n` hits of that (run key, node) and succeeds afterwards. `n` is at most
 * {@link MAX_STUB_FAILURES}, well below `max_attempts`, so every run is expected to SUCCEED —
 * any other outcome is a failure the engine caused.
 */
import { intOf, unit } from './rng.js';

export const WORKFLOW_ID = 'chaos-mixed';
export const HTTP_NODES = ['fetch', 'ping', 'left', 'right', 'finish'] as const;
export type HttpNode = (typeof HTTP_NODES)[number];
export const MAX_ATTEMPTS = 6;
export const MAX_STUB_FAILURES = 2;
/** Backoff of the HTTP nodes' retries: 0.2 s, 0.4 s, 0.8 s, … */
export const BACKOFF_SECONDS = 0.2;

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
      { from: 'approval', to: 'join' },
      { from: 'pause', to: 'join' },
      { from: 'ping', to: 'join' },
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
  for (const n of ['start', 'fetch', 'approval', 'pause', 'ping', 'join', 'route', plan.path, 'finish']) {
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
