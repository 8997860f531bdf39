/**
 * The report of `npm run bench:peers`: a summary table of every engine, then each engine's setup,
 * durability settings, window, CPU by process and checks, then Weft's ratios to the best peer.
 */
import { cpus, loadavg } from 'node:os';
import { fmt, table } from './report.js';
import type { EngineResult } from './peer-result.js';
import { CHAIN_STEPS, IN_FLIGHT, WARMUP_RUNS } from './peer-workload.js';

/** Groups that are the bench's own work (the same GETs for every engine), not the engine's. */
const BENCH_GROUPS = new Set(['stub (node)', 'driver (node)', 'driver (bench process)']);

/** The figures of one engine the report compares. */
export interface Figures {
  stepsPerSec: number;
  soloMs: number;
  soloMin: number;
  soloMax: number;
  /** CPU ms per step completed in the window: every process, and without the stub and a separate driver. */
  cpuAll: number;
  cpuEngine: number;
}

export function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function figures(r: EngineResult): Figures {
  const total = r.cpu.reduce((s, [, v]) => s + v, 0);
  const engine = r.cpu.filter(([n]) => !BENCH_GROUPS.has(n)).reduce((s, [, v]) => s + v, 0);
  const steps = r.windowSteps;
  return {
    stepsPerSec: steps / r.windowSeconds,
    soloMs: median(r.soloMsPerStep),
    soloMin: r.soloMsPerStep.length ? Math.min(...r.soloMsPerStep) : NaN,
    soloMax: r.soloMsPerStep.length ? Math.max(...r.soloMsPerStep) : NaN,
    cpuAll: steps ? (total * 1000) / steps : NaN,
    cpuEngine: steps ? (engine * 1000) / steps : NaN,
  };
}

const correct = (r: EngineResult) => (r.problems.length ? 'NO' : 'yes');

export interface ReportInput {
  started: Date;
  seconds: number;
  soloRuns: number;
  load0: number[];
  results: EngineResult[];
}

export function report(x: ReportInput): string[] {
  const L: string[] = [];
  const la = (v: number[]) => v.map((n) => n.toFixed(2)).join(' ');
  L.push(
    `== weft bench:peers · ${x.started.toISOString()} · ${cpus().length} CPUs · Node ${process.version} · load average ${la(x.load0)} at start, ${la(loadavg())} at end ==`,
  );
  L.push(
    `same workload for every engine, one engine at a time: a ${CHAIN_STEPS}-step sequential chain, each step one HTTP GET to a local stub (a process of its own); ` +
      `warm-up ${WARMUP_RUNS} workflows, then ${IN_FLIGHT} in flight for ${x.seconds} s (a lane starts its next workflow as its previous one ends), then ${x.soloRuns} alone`,
  );
  L.push('');
  const rows = x.results.map((r) => {
    const f = figures(r);
    return [
      r.engine,
      fmt(f.stepsPerSec, 1),
      fmt(f.soloMs, 2),
      `${fmt(f.soloMin, 2)}–${fmt(f.soloMax, 2)} (${r.soloMsPerStep.length})`,
      fmt(f.cpuAll, 2),
      fmt(f.cpuEngine, 2),
      correct(r),
    ];
  });
  for (const l of table(
    ['engine', `steps/s, ${IN_FLIGHT} in flight`, 'ms/step alone', 'range (runs)', 'CPU ms/step, all', 'CPU ms/step, w/o stub+driver', 'correct'],
    rows,
    true,
  ))
    L.push(`  ${l}`);
  L.push(
    "  (ms/step alone: wall time of a workflow run alone ÷ 20, median. CPU over the window ÷ steps completed in it; DBOS's driver runs inside its app process and stays counted.)",
  );
  L.push('');

  for (const r of x.results) {
    const f = figures(r);
    L.push(`${r.engine} — ${r.version}${r.load ? ` · load average ${r.load[0].toFixed(2)} before, ${r.load[1].toFixed(2)} after` : ''}`);
    for (const s of r.setup) L.push(`  setup: ${s}`);
    for (const d of r.durability) L.push(`  durability: ${d}`);
    if (Number.isFinite(r.windowSteps)) {
      L.push(
        `  window: ${fmt(r.windowSteps, 0)} steps in ${fmt(r.windowSeconds, 2)} s = ${fmt(f.stepsPerSec, 1)} steps/s (${r.windowStepsSource}); the stub answered ${fmt(r.stubHitsInWindow, 0)} GETs in it`,
      );
      const total = r.cpu.reduce((s, [, v]) => s + v, 0);
      L.push(
        `  CPU over the window: ${fmt(f.cpuAll, 2)} ms / step in all, ${fmt((total / r.windowSeconds) * 100, 0)}% of one core out of ${cpus().length * 100}%`,
      );
      for (const l of table(
        ['process', 'CPU s', '% of a core', 'ms / step', 'share'],
        r.cpu.map(([n, s]) => [n, fmt(s, 2), fmt((s / r.windowSeconds) * 100, 0), fmt((s * 1000) / r.windowSteps, 3), `${fmt((s / total) * 100, 0)}%`]),
      ))
        L.push(`    ${l}`);
    }
    L.push(`  workflows run: ${r.workflows} (warm-up, window and alone), each checked:`);
    for (const c of r.checks) L.push(`    - ${c}`);
    for (const n of r.notes) L.push(`  note: ${n}`);
    if (r.problems.length) {
      L.push('  correct: NO — first problems:');
      for (const p of r.problems) L.push(`    - ${p}`);
    } else L.push('  correct: yes');
    L.push('');
  }

  L.push(...ratios(x.results));
  L.push(...watchedRatio(x.results));
  const bad = x.results.filter((r) => r.problems.length);
  L.push('');
  L.push(bad.length ? `correct: NO (${bad.map((r) => r.engine).join(', ')})` : 'correct: yes');
  return L;
}

/** `weft dev` with every run watched over `weft dev` with none: steps/s (< 1: watching costs throughput). */
function watchedRatio(results: EngineResult[]): string[] {
  const dev = results.find((r) => r.engine === 'Weft (weft dev)');
  const watched = results.find((r) => r.engine === 'Weft (weft dev, watched)');
  if (!dev || !watched) return [];
  const ratio = figures(watched).stepsPerSec / figures(dev).stepsPerSec;
  const bad = [dev, watched].filter((r) => r.problems.length).map((r) => r.engine);
  return [`weft dev steps/s, every run watched ÷ none watched: ${fmt(ratio, 2)}${bad.length ? ` (did not run correctly: ${bad.join(', ')})` : ''}`];
}

/** Weft's figures over the best peer's, per figure (higher steps/s is better, lower ms is). */
function ratios(results: EngineResult[]): string[] {
  const peers = results.filter((r) => !r.engine.startsWith('Weft') && !r.problems.length);
  const wefts = results.filter((r) => r.engine.startsWith('Weft'));
  if (!peers.length || !wefts.length) return ['ratios: n/a (they need Weft and at least one peer that ran correctly)'];
  const best = (key: keyof Figures, higher: boolean) =>
    peers
      .map((r) => ({ r, v: figures(r)[key] }))
      .filter((e) => Number.isFinite(e.v))
      .sort((a, b) => (higher ? b.v - a.v : a.v - b.v))[0];
  const rows: string[][] = [];
  const line = (label: string, key: keyof Figures, higher: boolean, digits: number) => {
    const b = best(key, higher);
    rows.push([label, b ? `${b.r.engine} ${fmt(b.v, digits)}` : 'n/a', ...wefts.map((w) => (b ? fmt(figures(w)[key] / b.v, 2) : 'n/a'))]);
  };
  line(`steps/s, ${IN_FLIGHT} in flight (Weft ÷ best; > 1: Weft faster)`, 'stepsPerSec', true, 1);
  line('ms/step alone (Weft ÷ best; < 1: Weft faster)', 'soloMs', false, 2);
  line('CPU ms/step, all processes (Weft ÷ best; < 1: Weft cheaper)', 'cpuAll', false, 2);
  line('CPU ms/step, without stub and driver (Weft ÷ best)', 'cpuEngine', false, 2);
  const L = ["ratios of Weft to the best peer (each figure's best among the peers that ran correctly)"];
  for (const l of table(['figure', 'best peer', ...wefts.map((w) => w.engine)], rows, false)) L.push(`  ${l}`);
  const dev = wefts.find((w) => w.engine === 'Weft (weft dev)');
  const dbos = results.find((r) => r.engine === 'DBOS');
  if (dev && dbos) {
    L.push(
      `  weft dev steps/s ÷ DBOS steps/s (one process each, both on this PostgreSQL): ${fmt(figures(dev).stepsPerSec / figures(dbos).stepsPerSec, 2)}${dbos.problems.length ? ' (DBOS did not run correctly)' : ''}`,
    );
  }
  return L;
}
