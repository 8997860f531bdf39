import { describe, expect, it } from '@jest/globals';
import { SUBWORKFLOW_SPEC_KEYS, WAIT_SPEC_KEYS } from '../../model/validation/vocabulary.js';
import { childSpec } from './subworkflow.js';
import { wakeTime } from './wait-spec.js';
import { watched } from '../../../../../test/support/watched.js';

/** Publishing refuses any spec key outside its type's list: the machine must read no other. */
describe('the spec keys the machine reads are the ones publishing allows', () => {
  it('WAIT: duration_seconds and until', () => {
    const w = watched({ duration_seconds: 5 });
    expect(wakeTime(w.spec, new Date('2030-01-01T00:00:00Z'))).toEqual(new Date('2030-01-01T00:00:05Z'));
    expect([...w.read].sort()).toEqual([...WAIT_SPEC_KEYS].sort());
  });

  it('SUBWORKFLOW: workflow, version, input and config', () => {
    const w = watched({ workflow: 'payment', version: 2, input: { amount: 5 }, config: {} });
    expect(childSpec(w.spec)).toEqual({ workflow: 'payment', version: 2, input: { amount: 5 }, config: {} });
    expect([...w.read].sort()).toEqual([...SUBWORKFLOW_SPEC_KEYS].sort());
  });
});
