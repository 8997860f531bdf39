import { describe, expect, it } from '@jest/globals';
import { CURSOR_PARAM, hasFilters, NO_FILTERS, readFilters, toFilterInput, writeFilters } from './filters.js';

describe('run filters in the URL', () => {
  it('are read from the search params, absent ones as empty', () => {
    const params = new URLSearchParams('status=FAILED&workflowId=order-flow&after=abc');
    expect(readFilters(params)).toEqual({ ...NO_FILTERS, status: 'FAILED', workflowId: 'order-flow' });
  });
  it('are written without the empty ones and without the cursor, other params kept', () => {
    const current = new URLSearchParams('status=FAILED&after=abc&tab=x');
    const next = writeFilters(current, { ...NO_FILTERS, workflowId: ' order-flow ', version: '2' });
    expect(next.get('status')).toBeNull();
    expect(next.get(CURSOR_PARAM)).toBeNull();
    expect(next.get('workflowId')).toBe('order-flow');
    expect(next.get('version')).toBe('2');
    expect(next.get('tab')).toBe('x');
    expect(current.get(CURSOR_PARAM)).toBe('abc');
  });
  it('round-trip', () => {
    const filters = {
      status: 'RUNNING',
      workflowId: 'w',
      version: '3',
      createdAfter: '2025-01-01T00:00:00.000Z',
      createdBefore: '2025-02-01T00:00:00.000Z',
      schedule: '0190aaaa-0000-7000-8000-000000000001',
    };
    expect(readFilters(writeFilters(new URLSearchParams(), filters))).toEqual(filters);
    expect(hasFilters(filters)).toBe(true);
    expect(hasFilters(NO_FILTERS)).toBe(false);
  });
});

describe('toFilterInput', () => {
  it('is empty without filters', () => {
    expect(toFilterInput(NO_FILTERS)).toEqual({ filter: {}, problem: null });
  });
  it('converts the version to a number and the dates to ISO', () => {
    expect(
      toFilterInput({ status: 'SUCCEEDED', workflowId: 'w', version: '12', createdAfter: '2025-01-01T10:00:00+02:00', createdBefore: '', schedule: '' }),
    ).toEqual({
      filter: { status: 'SUCCEEDED', workflowId: 'w', version: 12, createdAfter: '2025-01-01T08:00:00.000Z' },
      problem: null,
    });
  });
  it('asks for paused runs by their status', () => {
    expect(toFilterInput({ ...NO_FILTERS, status: 'PAUSED' })).toEqual({ filter: { status: 'PAUSED' }, problem: null });
    expect(readFilters(new URLSearchParams('status=PAUSED'))).toEqual({ ...NO_FILTERS, status: 'PAUSED' });
    expect(toFilterInput({ ...NO_FILTERS, status: 'paused' }).problem).toBe('Unknown status "paused".');
  });
  it('names what is wrong instead of asking the API', () => {
    expect(toFilterInput({ ...NO_FILTERS, status: 'DONE' }).problem).toBe('Unknown status "DONE".');
    expect(toFilterInput({ ...NO_FILTERS, workflowId: 'w', version: '1.5' }).problem).toBe('Version must be a whole number from 1, not "1.5".');
    expect(toFilterInput({ ...NO_FILTERS, workflowId: 'w', version: '0' }).problem).toMatch(/^Version must be/);
    expect(toFilterInput({ ...NO_FILTERS, schedule: 's-1' })).toEqual({ filter: { scheduleId: 's-1' }, problem: null });
    expect(toFilterInput({ ...NO_FILTERS, version: '2' })).toEqual({ filter: { version: 2 }, problem: null }); // of any workflow
    expect(toFilterInput({ ...NO_FILTERS, createdAfter: 'tomorrow' }).problem).toBe('Created after is not a date: "tomorrow".');
    expect(toFilterInput({ ...NO_FILTERS, createdAfter: '2025-02-01T00:00:00Z', createdBefore: '2025-01-01T00:00:00Z' }).problem).toBe(
      'Created after must be earlier than created before.',
    );
  });
});
