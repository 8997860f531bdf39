import { describe, expect, it } from '@jest/globals';
import { decisionText, recordedDecision } from './switch-decision.js';
import { NodeType } from './workflow-types.js';

const EDGES = [
  { from: 's', to: 'big', condition: '{{input.n > 10}}' },
  { from: 's', to: 'neg', condition: '{{input.n < 0}}' },
  { from: 's', to: 'other' },
  { from: 'x', to: 'big' },
];

describe('a SWITCH decision rebuilt from its recorded branches', () => {
  it('takes each condition as held exactly when its target was selected, and knows the default', () => {
    const d = recordedDecision({ node_id: 's', type: NodeType.Switch, spec: { default: 'other' } }, EDGES, ['other']);
    expect(d).toEqual({
      branches: ['other'],
      default: 'other',
      defaultTaken: true,
      conditions: [
        { to: 'big', condition: '{{input.n > 10}}', value: false },
        { to: 'neg', condition: '{{input.n < 0}}', value: false },
      ],
    });
    expect(decisionText(d)).toBe('default taken: other');
  });

  it('says no branch was taken, with every condition, for an empty decision; nothing for an ordinary one', () => {
    const none = recordedDecision({ node_id: 's', type: NodeType.Switch }, EDGES.slice(0, 2), []);
    expect(decisionText(none)).toBe('no branch taken: conditions evaluated: to=big {{input.n > 10}} → false; to=neg {{input.n < 0}} → false');
    expect(decisionText(recordedDecision({ node_id: 's', type: NodeType.Switch }, EDGES, ['neg', 'other']))).toBeUndefined();
  });
});
