import { describe, expect, it } from '@jest/globals';
import { CombinedError } from '@urql/core';
import { byFirstSegment, placeProblems, textSpotOf } from './problems.js';

const refused = (message: string, problems: unknown[], code = 'BAD_USER_INPUT') =>
  new CombinedError({ graphQLErrors: [{ message, extensions: { code, problems } }] });

describe('placeProblems', () => {
  it('puts each problem at the field its path starts with, and the rest apart', () => {
    const error = refused('Invalid input', [
      { path: 'input.$.order_id', message: 'contains a NUL character' },
      { path: 'config', message: 'must be a JSON object' },
      { path: 'priority', message: 'must be from 1 to 5' },
      { path: 'input.amount', message: 'is not storable' },
    ]);
    expect(placeProblems(error, byFirstSegment(['workflowId', 'input', 'config'] as const))).toEqual({
      summary: ['BAD_USER_INPUT: Invalid input'],
      fields: {
        input: [
          { path: 'input.$.order_id', message: 'contains a NUL character' },
          { path: 'input.amount', message: 'is not storable' },
        ],
        config: [{ path: 'config', message: 'must be a JSON object' }],
      },
      rest: [{ path: 'priority', message: 'must be from 1 to 5' }],
    });
  });

  it('keeps the node of a problem and leaves out one that only repeats its message', () => {
    const error = refused('invalid workflow definition: 1 problem(s)', [
      { path: 'edges[0].to', nodeId: 'a', message: 'edge to unknown node "ghost"' },
      { message: 'invalid workflow definition: 1 problem(s)' },
    ]);
    expect(placeProblems(error, () => 'definition')).toEqual({
      summary: ['BAD_USER_INPUT: invalid workflow definition: 1 problem(s)'],
      fields: { definition: [{ path: 'edges[0].to', nodeId: 'a', message: 'edge to unknown node "ghost"' }] },
      rest: [],
    });
  });

  it('gives an error without problems, and a network failure, as the summary alone', () => {
    const notFound = new CombinedError({ graphQLErrors: [{ message: 'Workflow version not found', extensions: { code: 'NOT_FOUND' } }] });
    expect(placeProblems(notFound, () => 'x')).toEqual({ summary: ['NOT_FOUND: Workflow version not found'], fields: {}, rest: [] });
    expect(placeProblems(new CombinedError({ networkError: new Error('Failed to fetch') }), () => 'x').summary).toEqual(['Network error: Failed to fetch']);
  });
});

describe('textSpotOf', () => {
  it('reads the place of a YAML syntax error, and nothing from a JSON path', () => {
    expect(textSpotOf({ path: 'line 3, column 12', message: 'YAML syntax error' })).toEqual({ line: 3, column: 12 });
    expect(textSpotOf({ path: 'nodes[0].spec', message: 'x' })).toBeNull();
    expect(textSpotOf({ message: 'x' })).toBeNull();
  });
});
