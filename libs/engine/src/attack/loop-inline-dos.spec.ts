import { describe, expect, it } from '@jest/globals';
import { MAX_ITERATIONS, type WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, type JsonValue } from '../model/workflow-types.js';
import { validateDefinition } from '../model/validate.js';
import { edge, fork, Harness } from '../statemachine/testing/harness.js';

/**
 * A DO_WHILE whose body holds control nodes only runs every iteration within one event. Nothing
 * bounds what that event does but max_iterations x body size: 50 FORKs x 10,000 iterations is
 * one RunStarted of 510,002 actions (500,001 tasks, 9,999 NextLoopIteration), 5.5 s of machine
 * CPU and 70 MB of actions; against PostgreSQL 10 FORKs x 5000 took one startRun 87-129 s.
 * A for_each node is bounded at MAX_ITERATIONS tasks; one event of a loop should be too.
 * Marked failing: it documents the gap until iterations are bounded per event.
 */
describe('attack: a DO_WHILE of control nodes only', () => {
  it.failing('creates at most MAX_ITERATIONS tasks in one event', async () => {
    const n = 50;
    const body = Array.from({ length: n }, (_, i) => fork(`f${i}`));
    const edges = body.slice(1).map((b, i) => edge(`f${i}`, b.node_id));
    const l: WorkflowNode = {
      node_id: 'l',
      type: NodeType.DoWhile,
      spec: { body: { nodes: body, edges } as unknown as JsonValue, condition: '{{true}}', max_iterations: 10_000 },
    };
    expect(validateDefinition({ nodes: [l], edges: [] })).toEqual([]);
    const tr = await new Harness([l], []).start();
    expect(tr.actions.filter((a) => a.type === 'CreateTask').length).toBeLessThanOrEqual(MAX_ITERATIONS);
  });
});
