import { describe, expect, it } from '@jest/globals';
import { CURSOR_PARAM, hasFilters, NO_FILTERS, parseLabels, readFilters, toFilterInput, writeFilters } from './filters.js';

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
      ...NO_FILTERS,
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
    expect(toFilterInput({ ...NO_FILTERS, status: 'SUCCEEDED', workflowId: 'w', version: '12', createdAfter: '2025-01-01T10:00:00+02:00' })).toEqual({
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

describe('labels, failed node, error text and finish times', () => {
  it('keep each label in a param of its own, and the new filters under their names', () => {
    const filters = {
      ...NO_FILTERS,
      labels: 'team=ops\n env=prod a,b \n\n',
      failedNodeId: 'charge',
      errorContains: 'card declined',
      finishedAfter: '2025-03-01T00:00:00.000Z',
      finishedBefore: '2025-04-01T00:00:00.000Z',
    };
    const params = writeFilters(new URLSearchParams('label=old%3D1&after=c'), filters);
    expect(params.toString()).toBe(
      'failedNodeId=charge&errorContains=card+declined&finishedAfter=2025-03-01T00%3A00%3A00.000Z&finishedBefore=2025-04-01T00%3A00%3A00.000Z&label=team%3Dops&label=env%3Dprod+a%2Cb',
    );
    expect(readFilters(params)).toEqual({ ...filters, labels: 'team=ops\nenv=prod a,b' });
    expect(hasFilters({ ...NO_FILTERS, labels: 'team=ops' })).toBe(true);
    expect(hasFilters({ ...NO_FILTERS, labels: ' \n ' })).toBe(false);
  });
  it('send the labels as an object and the rest as given', () => {
    expect(
      toFilterInput({
        ...NO_FILTERS,
        labels: 'team=ops\nnote=a=b',
        failedNodeId: 'charge',
        errorContains: '50%',
        finishedAfter: '2025-03-01T02:00:00+02:00',
      }),
    ).toEqual({
      filter: { labels: { team: 'ops', note: 'a=b' }, failedNodeId: 'charge', errorContains: '50%', finishedAfter: '2025-03-01T00:00:00.000Z' },
      problem: null,
    });
  });
  it('name a label that is not key=value, a key the API refuses, and a key given twice', () => {
    expect(parseLabels('team=ops\nteam=ops')).toEqual({ labels: { team: 'ops' }, problem: null });
    expect(parseLabels('empty=')).toEqual({ labels: { empty: '' }, problem: null });
    expect(parseLabels('team')).toEqual({ labels: null, problem: 'Label "team" is not key=value.' });
    expect(parseLabels('a b=c').problem).toBe('Label key "a b" must be 1 to 64 characters of A-Z a-z 0-9 _ . -');
    expect(parseLabels('=c').problem).toBe('Label key "" must be 1 to 64 characters of A-Z a-z 0-9 _ . -');
    expect(parseLabels('team=ops\nteam=dev').problem).toBe('Label team is given twice, with different values.');
    expect(toFilterInput({ ...NO_FILTERS, labels: 'oops' }).problem).toBe('Label "oops" is not key=value.');
  });
  it('refuse finish times that are not dates or not in order', () => {
    expect(toFilterInput({ ...NO_FILTERS, finishedBefore: 'soon' }).problem).toBe('Finished before is not a date: "soon".');
    expect(toFilterInput({ ...NO_FILTERS, finishedAfter: '2025-02-01T00:00:00Z', finishedBefore: '2025-02-01T00:00:00Z' }).problem).toBe(
      'Finished after must be earlier than finished before.',
    );
  });
});
