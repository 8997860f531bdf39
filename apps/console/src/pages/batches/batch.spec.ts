import { describe, expect, it } from '@jest/globals';
import { actionVerb, batchInput, bulkRefusal, countRefusal, pendingOf, progressWords, runsWord } from './batch.js';

describe('batchInput', () => {
  const filter = { labels: { team: 'ops' } };
  it('sends the trimmed reason of a pause, and no node', () => {
    expect(batchInput({ action: 'PAUSE', reason: '  window  ', fromNodeId: 'charge' }, filter, 'k1')).toEqual({
      input: { action: 'PAUSE', filter: { labels: { team: 'ops' } }, reason: 'window', idempotencyKey: 'k1' },
      problem: null,
    });
  });
  it('leaves out an empty reason', () => {
    expect(batchInput({ action: 'CANCEL', reason: '   ', fromNodeId: '' }, filter, 'k2')).toEqual({
      input: { action: 'CANCEL', filter: { labels: { team: 'ops' } }, idempotencyKey: 'k2' },
      problem: null,
    });
  });
  it('sends a retry with its node and without the reason, and refuses one without a node', () => {
    expect(batchInput({ action: 'RETRY', reason: 'x', fromNodeId: ' charge ' }, { status: 'FAILED' }, 'k3')).toEqual({
      input: { action: 'RETRY', filter: { status: 'FAILED' }, fromNodeId: 'charge', idempotencyKey: 'k3' },
      problem: null,
    });
    expect(batchInput({ action: 'RETRY', reason: '', fromNodeId: '  ' }, filter, 'k4')).toEqual({
      input: null,
      problem: 'A retry needs the node each run is retried from.',
    });
  });
  it('refuses a reason longer than 2,000 characters', () => {
    expect(batchInput({ action: 'RESUME', reason: 'r'.repeat(2001), fromNodeId: '' }, filter, 'k5').problem).toBe(
      'The reason is 2001 characters; at most 2000 are kept.',
    );
    expect(batchInput({ action: 'RESUME', reason: 'r'.repeat(2000), fromNodeId: '' }, filter, 'k5').problem).toBeNull();
  });
});

describe('refusals', () => {
  it('refuses an empty or broken filter before counting', () => {
    expect(bulkRefusal(false, null)).toBe('A bulk action acts on the runs the filter matches; set a filter first (an empty filter would match every run).');
    expect(bulkRefusal(true, 'Unknown status "X".')).toBe('Fix the filter first: Unknown status "X".');
    expect(bulkRefusal(true, null)).toBeNull();
  });
  it('refuses no runs and more than 100,000', () => {
    expect(countRefusal(0)).toBe('No runs match this filter: there is nothing to act on.');
    expect(countRefusal(1)).toBeNull();
    expect(countRefusal(100_000)).toBeNull();
    expect(countRefusal(100_001)).toBe('100,001 runs match; one bulk action takes at most 100,000 runs. Narrow the filter.');
  });
});

describe('progress', () => {
  it('counts what is done and pending', () => {
    const b = { total: 4, applied: 2, skipped: 1, failed: 0 };
    expect(pendingOf(b)).toBe(1);
    expect(progressWords(b)).toBe('3 of 4 runs done: 2 applied, 1 skipped, 0 failed, 1 pending');
    expect(progressWords({ total: 1, applied: 0, skipped: 0, failed: 1 })).toBe('1 of 1 run done: 0 applied, 0 skipped, 1 failed, 0 pending');
    expect(pendingOf({ total: 1, applied: 2, skipped: 0, failed: 0 })).toBe(0);
  });
  it('names actions and runs', () => {
    expect(actionVerb('PAUSE')).toBe('Pause');
    expect(actionVerb('RETRY')).toBe('Retry');
    expect(actionVerb('ARCHIVE')).toBe('ARCHIVE');
    expect(runsWord(1)).toBe('1 run');
    expect(runsWord(12345)).toBe('12,345 runs');
  });
});
