import { describe, expect, it } from '@jest/globals';
import { placedNodes, type WorkflowDefinition } from './engine-side.js';
import { newLogLines, workerNodesOf } from './logs-command.js';

describe('newLogLines', () => {
  const tasks = [
    {
      id: 't1',
      nodeId: 'fetch',
      iteration: null,
      attempts: [
        { attempt: 0, logs: 'GET a -> 503 (1 ms)\n' },
        { attempt: 1, logs: 'GET a -> 200 (1 ms)\n' },
      ],
    },
    {
      id: 't2',
      nodeId: 'each',
      iteration: 3,
      attempts: [
        { attempt: 0, logs: 'one\n\nthree' },
        { attempt: 1, logs: null },
      ],
    },
  ];

  it('prefixes every line, an empty one too, with the node (and iteration) and the attempt counted from 1', () => {
    expect(newLogLines(tasks, new Set(), true)).toBe(
      '[fetch #1] GET a -> 503 (1 ms)\n[fetch #2] GET a -> 200 (1 ms)\n[each[3] #1] one\n[each[3] #1] \n[each[3] #1] three\n',
    );
  });

  it("names a DO_WHILE body task's lines with its iteration, counted from 1", () => {
    const looped = [
      { id: 't4', nodeId: 'check', nodeType: 'CODE', iteration: null, loopIteration: 1, attempts: [{ attempt: 0, logs: 'polled\n' }] },
      { id: 't5', nodeId: 'poll', nodeType: 'DO_WHILE', iteration: null, loopIteration: 1, attempts: [] },
    ];
    expect(newLogLines(looped, new Set(), true)).toBe('[check (iteration 2) #1] polled\n');
  });

  it('prints each attempt once, and an attempt without logs never', () => {
    const printed = new Set(['t1#0']);
    expect(newLogLines(tasks, printed, false)).toBe('GET a -> 200 (1 ms)\none\n\nthree\n');
    expect(newLogLines(tasks, printed, false)).toBe('');
    expect([...printed].sort()).toEqual(['t1#0', 't1#1', 't2#0']);
  });

  it('shows control characters escaped, so that what the code printed cannot drive the terminal', () => {
    const hostile = [
      { id: 't3', nodeId: 'evil', iteration: null, attempts: [{ attempt: 0, logs: 'a\u001b[2J\u001b]0;owned\u0007b\rfake\tcol\u009b1m\r\nnext\n' }] },
    ];
    expect(newLogLines(hostile, new Set(), false)).toBe('a\\u001b[2J\\u001b]0;owned\\u0007b\\rfake\tcol\\u009b1m\nnext\n');
  });
});

describe('workerNodesOf', () => {
  it("lists the HTTP and CODE nodes of a loop's body too, marked as repeating", () => {
    const def = {
      nodes: [
        { node_id: 'start', type: 'HTTP' },
        { node_id: 'gate', type: 'SWITCH' },
        {
          node_id: 'poll',
          type: 'DO_WHILE',
          spec: {
            body: {
              nodes: [
                { node_id: 'check', type: 'CODE' },
                { node_id: 'pause', type: 'WAIT' },
              ],
            },
          },
        },
      ],
    };
    expect(workerNodesOf(placedNodes(def.nodes as unknown as WorkflowDefinition['nodes']))).toEqual([
      { id: 'start', inLoop: false },
      { id: 'check', inLoop: true },
    ]);
    expect(workerNodesOf(placedNodes(undefined))).toEqual([]);
  });
});
