import { describe, expect, it } from '@jest/globals';
import { isRetentionProblem, retentionInput, retentionText, retentionWords } from './retention.js';

describe('retention days', () => {
  it('are empty for keep forever, the number otherwise', () => {
    expect(retentionText(null)).toBe('');
    expect(retentionText(undefined)).toBe('');
    expect(retentionText(30)).toBe('30');
  });
  it('send null for an empty field and the whole number otherwise, out of range too', () => {
    expect(retentionInput('  ')).toEqual({ retentionDays: null, problem: null });
    expect(retentionInput(' 30 ')).toEqual({ retentionDays: 30, problem: null });
    expect(retentionInput('0')).toEqual({ retentionDays: 0, problem: null });
    expect(retentionInput('-5')).toEqual({ retentionDays: -5, problem: null });
    expect(retentionInput('99999')).toEqual({ retentionDays: 99999, problem: null });
  });
  it('refuse text that is not a whole number', () => {
    expect(retentionInput('1.5')).toEqual({ retentionDays: null, problem: 'Retention days must be a whole number, not "1.5".' });
    expect(retentionInput('ten').problem).toBe('Retention days must be a whole number, not "ten".');
    expect(retentionInput('99999999999999999999').problem).toBe('Retention days must be a whole number, not "99999999999999999999".');
  });
  it('find the problems of the field by their path', () => {
    expect(isRetentionProblem({ path: 'retentionDays', message: 'x' })).toBe(true);
    expect(isRetentionProblem({ path: 'input.retentionDays', message: 'x' })).toBe(true);
    expect(isRetentionProblem({ path: 'retentionDaysX', message: 'x' })).toBe(false);
    expect(isRetentionProblem({ message: 'x' })).toBe(false);
  });
  it('say what the setting means', () => {
    expect(retentionWords(null)).toBe('Runs are kept forever.');
    expect(retentionWords(1)).toBe('Runs are deleted 1 day after their top-level run ended.');
    expect(retentionWords(3650)).toBe('Runs are deleted 3,650 days after their top-level run ended.');
  });
});
