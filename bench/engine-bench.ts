/**
 * The engine bench (`npm run bench:engine`, and the first part of `npm run bench`): the pure state machine alone. No database, no Redis,
 * no network: a {@link Machine} per event over an in-memory {@link Store}, exactly as the
 * coordinator drives it after reloading a run (the output cache starts empty on every event, so
 * outputs are only reachable through the Store) and as libs/engine's test harness does.
 *
 * It prints microseconds per event for chains and wide FORK/JOINs of 100, 1,000 and 10,000 HTTP
 * nodes, the 10,000 ÷ 100 ratio (an event must not cost more in a bigger DAG), and the bytes of
 * outputs the machine loads per event in a run whose completed nodes hold large outputs that the
 * next node does not read (and, for comparison, when every node reads the first node's output).
 */
import { cpus, loadavg } from 'node:os';
import {
  CelTemplateResolver,
  Machine,
  NodeType,
  buildDag,
  newRunSnapshot,
  type BufferedSignal,
  type ChildRun,
  type JsonValue,
  type RunEvent,
  type RunSnapshot,
  type Store,
  type Transition,
  type WorkflowDag,
  type WorkflowDefinition,
  type WorkflowNode,
} from '@weft/engine';
import { ENGINE_RATIO_TARGET, fmt, table } from './report.js';

const SIZES = [100, 1_000, 10_000] as const;
/** Repeat a scenario until it ran at least this long (small DAGs), for stable figures. */
const MIN_SCENARIO_MS = 400;
/** At least this many repetitions of each timed sample (the median is kept: the machine may be shared). */
const MIN_REPS = 5;
/** Whole runs (every event from RunStarted on) are timed up to this size; bigger ones are quadratic today. */
const WHOLE_RUN_MAX = 1_000;
/** Size of each node's output in the large-output run, bytes of JSON text. */
const LARGE_OUTPUT_BYTES = 16 * 1024;
const LARGE_OUTPUT_NODES = 500;

/** The in-memory Store: outputs by node id; counts what the machine loads. */
class MemoryStore implements Store {
  readonly saved = new Map<string, JsonValue>();
  readonly inputs = new Map<string, JsonValue>();
  loadedBytes = 0;
  loadCalls = 0;
  /** When set, `loadedBytes` counts the JSON size of every output returned (off while timing). */
  measureBytes = false;

  async outputs(nodeIds: string[]): Promise<Map<string, JsonValue>> {
    this.loadCalls++;
    const out = new Map<string, JsonValue>();
    for (const id of nodeIds) {
      const v = this.saved.get(id);
      if (v === undefined) continue;
      out.set(id, v);
      if (this.measureBytes) this.loadedBytes += JSON.stringify(v).length;
    }
    return out;
  }
  async pendingSignal(): Promise<BufferedSignal | undefined> {
    return undefined;
  }
  async iterationOutputs(): Promise<JsonValue[] | { tooLarge: number }> {
    return [];
  }
  async taskInput(taskId: string): Promise<JsonValue | undefined> {
    return this.inputs.get(taskId);
  }
  async childRun(): Promise<ChildRun | undefined> {
    return undefined;
  }
  async treeRuns(): Promise<number> {
    return 1;
  }
  async startableVersion(): Promise<{ version: number } | { error: string }> {
    return { error: 'no child workflows in the engine bench' };
  }
}

/** One run driven event by event, persisting what the actions write (as the harness does). */
class Driver {
  readonly run: RunSnapshot;
  readonly store = new MemoryStore();
  private readonly templates = new CelTemplateResolver();
  private readonly now = new Date('2030-01-01T00:00:00.000Z');
  private ids = 0;
  events = 0;

  constructor(private readonly dag: WorkflowDag) {
    this.run = newRunSnapshot('run-1', 'bench', 1, { n: 1 }, {});
  }

  async apply(ev: RunEvent): Promise<Transition> {
    this.run.context.tasks = new Map(); // a reloaded snapshot: no output cached
    const m = new Machine(this.dag, this.run, {
      templates: this.templates,
      store: this.store,
      now: () => this.now,
      newId: () => `t${++this.ids}`,
    });
    const tr = await m.apply(ev);
    this.events++;
    for (const a of tr.actions) {
      if (a.type === 'CreateTask') {
        if (a.output !== undefined) this.store.saved.set(a.node.node_id, a.output);
        if (a.input !== undefined) this.store.inputs.set(a.taskId, a.input);
      } else if (a.type === 'CompleteTask') {
        this.store.saved.set(a.nodeId, a.output);
      }
    }
    return tr;
  }

  complete(nodeId: string, output: JsonValue): Promise<Transition> {
    const n = this.run.nodes.get(nodeId);
    if (!n) throw new Error(`node ${nodeId} not reached`);
    return this.apply({ type: 'NodeCompleted', taskId: n.taskId, nodeId, attempt: n.attempt, output });
  }
}

function http(id: string, spec: JsonValue = { url: 'https://example.com/{{input.n}}', method: 'GET' }): WorkflowNode {
  return { node_id: id, type: NodeType.Http, spec };
}

function chainDef(n: number, spec?: (i: number) => JsonValue): WorkflowDefinition {
  const nodes = Array.from({ length: n }, (_, i) => http(`n${i + 1}`, spec?.(i + 1)));
  const edges = Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i + 1}`, to: `n${i + 2}` }));
  return { nodes, edges };
}

function forkJoinDef(n: number): WorkflowDefinition {
  const nodes: WorkflowNode[] = [{ node_id: 'fork', type: NodeType.Fork }];
  const edges: { from: string; to: string }[] = [];
  for (let i = 1; i <= n; i++) {
    nodes.push(http(`b${i}`));
    edges.push({ from: 'fork', to: `b${i}` }, { from: `b${i}`, to: 'join' });
  }
  nodes.push({ node_id: 'join', type: NodeType.Join });
  return { nodes, edges };
}

/**
 * A driver whose run is already half-way: the first `done` nodes of `order` COMPLETED (output
 * `{}`), the next ones dispatched, as the machine itself leaves them. Node states are cloned from
 * a real run of a small DAG of the same shape (`shapeOf`), so the synthetic snapshot has exactly
 * the fields the machine writes; it spares replaying thousands of events (or a 10,000-branch
 * RunStarted) just to reach the middle of a big run.
 */
async function halfWay(dag: WorkflowDag, shape: 'chain' | 'fork/join', order: string[], done: number): Promise<Driver> {
  const small = new Driver(buildDag(shape === 'chain' ? chainDef(3) : forkJoinDef(2)));
  await small.apply({ type: 'RunStarted' });
  const first = shape === 'chain' ? 'n1' : 'b1';
  await small.complete(first, {});
  const completed = small.run.nodes.get(first)!;
  const dispatched = small.run.nodes.get(shape === 'chain' ? 'n2' : 'b2')!;
  const d = new Driver(dag);
  let t = 0;
  if (shape === 'fork/join') {
    d.run.nodes.set('fork', { ...small.run.nodes.get('fork')!, taskId: `s${++t}` });
    d.store.saved.set('fork', {});
  }
  // A chain has one dispatched node at a time; a FORK dispatched every branch at once.
  const reached = shape === 'chain' ? done + 1 : order.length;
  for (let i = 0; i < reached; i++) {
    const state = i < done ? completed : dispatched;
    d.run.nodes.set(order[i], { ...state, taskId: `s${++t}` });
    if (i < done) d.store.saved.set(order[i], {});
  }
  return d;
}

interface Timing {
  /** µs of a NodeCompleted event in the middle of the run (the step's cost): median over repetitions of the mean over the sample. */
  completion: number;
  /** Completions timed per repetition. */
  sample: number;
  reps: number;
  /** Mean µs per event over whole runs (RunStarted included); undefined when not run (too big). */
  wholeRun?: number;
  /** µs of RunStarted (a FORK dispatches every branch in it); `estimated` when extrapolated. */
  start?: number;
  startEstimated?: boolean;
}

const SAMPLE = 200;

/** µs per NodeCompleted over SAMPLE consecutive completions starting half-way through the run. */
async function timeCompletions(dag: WorkflowDag, shape: 'chain' | 'fork/join', order: string[]): Promise<Pick<Timing, 'completion' | 'sample' | 'reps'>> {
  const from = Math.floor(order.length / 2);
  const sample = Math.min(SAMPLE, order.length - from - 1); // never the last one (it finishes the run)
  const perRep: number[] = [];
  const t0 = performance.now();
  do {
    const d = await halfWay(dag, shape, order, from);
    const a = process.hrtime.bigint();
    for (let i = from; i < from + sample; i++) await d.complete(order[i], {});
    perRep.push(Number(process.hrtime.bigint() - a) / 1e3 / sample);
  } while (perRep.length < MIN_REPS || performance.now() - t0 < MIN_SCENARIO_MS);
  return { completion: median(perRep), sample, reps: perRep.length };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Whole runs (RunStarted, then every node of `order` completed): mean µs per event and µs of RunStarted. */
async function timeWholeRuns(dag: WorkflowDag, order: string[]): Promise<{ perEvent: number; start: number }> {
  let reps = 0;
  let totalNs = 0n;
  let startNs = 0n;
  let events = 0;
  const t0 = performance.now();
  do {
    const d = new Driver(dag);
    const a = process.hrtime.bigint();
    await d.apply({ type: 'RunStarted' });
    const b = process.hrtime.bigint();
    for (const id of order) await d.complete(id, {});
    const c = process.hrtime.bigint();
    if (d.run.status !== 'SUCCEEDED') throw new Error(`run ended ${d.run.status}, expected SUCCEEDED`);
    startNs += b - a;
    totalNs += c - a;
    events += d.events;
    reps++;
  } while (performance.now() - t0 < MIN_SCENARIO_MS);
  return { perEvent: Number(totalNs) / 1e3 / events, start: Number(startNs) / 1e3 / reps };
}

/** µs of RunStarted alone. */
async function timeStart(dag: WorkflowDag): Promise<number> {
  const d = new Driver(dag);
  const a = process.hrtime.bigint();
  await d.apply({ type: 'RunStarted' });
  return Number(process.hrtime.bigint() - a) / 1e3;
}

/** Bytes of outputs loaded per event over a run of a LARGE_OUTPUT_NODES chain whose nodes each output LARGE_OUTPUT_BYTES. */
async function loadedBytes(readsFirst: boolean): Promise<{ perEvent: number; loadsPerEvent: number; storedBytes: number }> {
  const spec = (i: number): JsonValue =>
    readsFirst && i > 1 ? { url: `https://example.com/{{tasks.n1.output.id}}`, method: 'GET' } : { url: 'https://example.com/{{input.n}}', method: 'GET' };
  const dag = buildDag(chainDef(LARGE_OUTPUT_NODES, spec));
  const d = new Driver(dag);
  d.store.measureBytes = true;
  const blob = 'x'.repeat(LARGE_OUTPUT_BYTES - 40);
  await d.apply({ type: 'RunStarted' });
  for (let i = 1; i <= LARGE_OUTPUT_NODES; i++) await d.complete(`n${i}`, { id: i, blob });
  if (d.run.status !== 'SUCCEEDED') throw new Error(`large-output run ended ${d.run.status}`);
  let stored = 0;
  for (const v of d.store.saved.values()) stored += JSON.stringify(v).length;
  return { perEvent: d.store.loadedBytes / d.events, loadsPerEvent: d.store.loadCalls / d.events, storedBytes: stored };
}

const bytes = (n: number) => (n >= 1024 * 1024 ? `${fmt(n / 1024 / 1024, 1)} MiB` : n >= 1024 ? `${fmt(n / 1024, 1)} KiB` : `${fmt(n, 0)} B`);

/** What {@link runEngineBench} measured, for the targets. */
export interface EngineResult {
  /** µs per step event, 10,000 ÷ 100 nodes, per shape. */
  ratios: { shape: string; ratio: number }[];
  worstRatio: number;
  met: boolean;
  /** The lines printed. */
  lines: string[];
}

/** Runs the engine bench, printing each line with `say`; returns the ratios and the lines. */
export async function runEngineBench(print: (line: string) => void): Promise<EngineResult> {
  const out: string[] = [];
  const say = (l = '') => {
    out.push(l);
    print(l);
  };
  const tStart = performance.now();
  say(
    `weft engine bench · Node ${process.version} · ${cpus().length} CPUs · load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} · ${new Date().toISOString()}`,
  );
  say('Machine.apply per event, fresh Machine and empty output cache per event, in-memory Store (no I/O).');
  say('');

  const orderOf = (shape: 'chain' | 'fork/join', n: number) => Array.from({ length: n }, (_, k) => (shape === 'chain' ? `n${k + 1}` : `b${k + 1}`));
  const defOf = (shape: 'chain' | 'fork/join', n: number) => (shape === 'chain' ? chainDef(n) : forkJoinDef(n));

  // JIT warm-up on small DAGs of both shapes.
  for (let i = 0; i < 5; i++) {
    for (const shape of ['chain', 'fork/join'] as const) await timeWholeRuns(buildDag(defOf(shape, 100)), orderOf(shape, 100));
  }

  const results: Record<'chain' | 'fork/join', Map<number, Timing>> = { chain: new Map(), 'fork/join': new Map() };
  for (const shape of ['chain', 'fork/join'] as const) {
    for (const size of SIZES) {
      const dag = buildDag(defOf(shape, size));
      const t: Timing = await timeCompletions(dag, shape, orderOf(shape, size));
      if (size <= WHOLE_RUN_MAX) {
        const w = await timeWholeRuns(dag, orderOf(shape, size));
        t.wholeRun = w.perEvent;
        t.start = w.start;
      } else if (shape === 'chain') {
        t.start = await timeStart(dag);
      } else {
        // A FORK's RunStarted grows faster than linearly here: time it at 1,000 and 2,000 branches
        // and extrapolate with the measured exponent rather than spend tens of seconds on it.
        const a = await timeStart(buildDag(defOf(shape, 1_000)));
        const b = await timeStart(buildDag(defOf(shape, 2_000)));
        t.start = b * Math.pow(size / 2_000, Math.log(b / a) / Math.log(2));
        t.startEstimated = true;
      }
      results[shape].set(size, t);
    }
  }

  const rows: string[][] = [];
  for (const shape of ['chain', 'fork/join'] as const) {
    for (const size of SIZES) {
      const t = results[shape].get(size)!;
      rows.push([
        shape,
        size.toLocaleString('en-US'),
        fmt(t.completion, 1),
        t.wholeRun === undefined ? 'not run' : fmt(t.wholeRun, 1),
        t.start === undefined ? 'n/a' : `${t.startEstimated ? '~' : ''}${fmt(t.start, 0)}`,
        `${t.sample} × ${t.reps}`,
      ]);
    }
  }
  for (const l of table(['shape', 'HTTP nodes', 'µs/event (step)', 'µs/event whole run', 'µs RunStarted', 'events timed'], rows)) say(l);
  say('µs/event (step): a NodeCompleted half-way through the run (the next node dispatched); whole run: every event incl. RunStarted,');
  say(`run only up to ${WHOLE_RUN_MAX.toLocaleString('en-US')} nodes; ~: extrapolated from 1,000 and 2,000 branches.`);
  say('');

  const ratios = (['chain', 'fork/join'] as const).map((shape) => {
    const r = results[shape].get(10_000)!.completion / results[shape].get(100)!.completion;
    return { shape, r };
  });
  for (const { shape, r } of ratios) say(`${shape.padEnd(10)} µs/event 10,000 ÷ 100 = ${fmt(r, 2)}`);
  say('');

  const unrelated = await loadedBytes(false);
  const related = await loadedBytes(true);
  say(
    `outputs loaded per event, ${LARGE_OUTPUT_NODES}-node chain, each output ${bytes(LARGE_OUTPUT_BYTES)} (${bytes(unrelated.storedBytes)} stored by the end):`,
  );
  say(
    `  specs read only {{input}}                ${bytes(unrelated.perEvent).padStart(10)} / event   (${fmt(unrelated.loadsPerEvent, 2)} Store.outputs calls / event)`,
  );
  say(
    `  each spec reads n1's output.id           ${bytes(related.perEvent).padStart(10)} / event   (${fmt(related.loadsPerEvent, 2)} Store.outputs calls / event)`,
  );
  say('');

  const worst = Math.max(...ratios.map((x) => x.r));
  const met = worst <= ENGINE_RATIO_TARGET;
  say(`target: engine µs/event 10,000 ÷ 100 ≤ ${ENGINE_RATIO_TARGET} (worst shape: ${fmt(worst, 2)})  ${met ? 'met' : 'NOT MET'}`);
  say(`engine bench took ${fmt((performance.now() - tStart) / 1000, 1)} s`);

  return { ratios: ratios.map((x) => ({ shape: x.shape, ratio: x.r })), worstRatio: worst, met, lines: out };
}
