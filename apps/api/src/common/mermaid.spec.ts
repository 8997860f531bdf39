import { describe, expect, it } from '@jest/globals';
import { edgeState, toMermaid, type MermaidGraph, type MermaidTask } from './mermaid.js';

/** An order flow: a SWITCH on the total, an approval branch, a ship step and a compensation on error. */
const graph: MermaidGraph = {
  nodes: [
    { node_id: 'fetch', type: 'HTTP' },
    { node_id: 'is_large', type: 'SWITCH' },
    { node_id: 'approval', type: 'WAIT_FOR_EVENT' },
    { node_id: 'ship', type: 'HTTP' },
    { node_id: 'refund', type: 'CODE' },
  ],
  edges: [
    { from: 'fetch', to: 'is_large' },
    { from: 'is_large', to: 'approval', condition: '{{tasks.fetch.output.total > 1000}}' },
    { from: 'is_large', to: 'ship' },
    { from: 'approval', to: 'ship' },
    { from: 'ship', to: 'refund', on_error: true },
  ],
};

const tasks = (entries: [string, MermaidTask][]) => new Map(entries);

describe('the picture of a run', () => {
  it('draws the edges a small order went along thick, and the branches it did not take dotted and grey', () => {
    const run = tasks([
      ['fetch', { status: 'COMPLETED' }],
      ['is_large', { status: 'COMPLETED', branches: ['ship'] }],
      ['approval', { status: 'SKIPPED' }],
      ['ship', { status: 'COMPLETED' }],
      ['refund', { status: 'SKIPPED' }],
    ]);
    expect(graph.edges.map((e) => edgeState(e, run))).toEqual(['taken', 'skipped', 'taken', 'skipped', 'skipped']);
    const lines = toMermaid(graph, run).split('\n');
    expect(lines).toContain('  n0 ==> n1');
    expect(lines).toContain('  n1 -.->|"{{tasks.fetch.output.total > 1000}}"| n2');
    expect(lines).toContain('  n1 ==> n3');
    expect(lines).toContain('  linkStyle 1,3,4 stroke:#bdbdbd,color:#9e9e9e');
    expect(lines).toContain('  n3["ship<br/>HTTP<br/>COMPLETED"]:::completed');
  });

  it('takes an error edge only when its source failed, and leaves edges of a running node undecided', () => {
    const failed = tasks([
      ['fetch', { status: 'COMPLETED' }],
      ['is_large', { status: 'COMPLETED', branches: ['ship'] }],
      ['ship', { status: 'FAILED' }],
      ['refund', { status: 'RUNNING' }],
    ]);
    expect(edgeState(graph.edges[4]!, failed)).toBe('taken');
    const running = tasks([['fetch', { status: 'RUNNING' }]]);
    expect(edgeState(graph.edges[0]!, running)).toBe('open');
    expect(toMermaid(graph, running)).not.toContain('linkStyle');
  });

  it('draws a definition without a run plainly, error edges dotted and labelled', () => {
    const text = toMermaid(graph);
    expect(text).toContain('  n0 --> n1');
    expect(text).toContain('  n3 -.->|"on error"| n4');
    expect(text).not.toContain('==>');
  });
});
