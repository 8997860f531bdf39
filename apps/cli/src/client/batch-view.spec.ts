import { describe, expect, it } from '@jest/globals';
import {
  batchDetailText,
  batchExitCode,
  batchListTable,
  confirmed,
  confirmQuestion,
  createdLine,
  filterText,
  matchLine,
  notAppliedText,
  progressLine,
  refusalMessage,
} from './batch-view.js';

const ID = '0a4b7c1e-2f3d-4e5f-8a9b-0c1d2e3f4a5b';
const counts = { id: ID, action: 'PAUSE', status: 'RUNNING', total: 5, applied: 2, skipped: 1, failed: 0 };

describe('what the batch commands print for people', () => {
  it('says how many runs match, asks, and reads the answer', () => {
    expect([0, 1, 3, 12_345].map(matchLine)).toEqual([
      'no run matches the filter now\n',
      '1 run matches the filter now\n',
      '3 runs match the filter now\n',
      '12,345 runs match the filter now\n',
    ]);
    expect(confirmQuestion('pause', 3)).toBe('pause 3 runs? [y/N] ');
    expect(confirmQuestion('cancel', 1)).toBe('cancel 1 run? [y/N] ');
    expect(['y', 'Y', 'yes', ' YES ', 'Yes\n'].map(confirmed)).toEqual([true, true, true, true, true]);
    expect(['', 'n', 'no', 'yess', 'sure', 'y y'].map(confirmed)).toEqual([false, false, false, false, false, false]);
    expect(refusalMessage('retry', 2)).toBe('retry 2 runs: stdin is not a terminal, so there is no one to confirm; give --yes to act without asking');
  });

  it('prints the created batch and its progress', () => {
    expect(createdLine(counts)).toBe(`batch ${ID} created: PAUSE of 5 runs\n`);
    expect(progressLine(counts)).toBe(`batch ${ID} RUNNING: 2 applied, 1 skipped, 0 failed of 5\n`);
    expect(progressLine({ ...counts, status: 'COMPLETED', applied: 4 })).toBe(`batch ${ID} COMPLETED: 4 applied, 1 skipped, 0 failed of 5\n`);
  });

  it('exits 3 when a run failed or the batch was stopped; a skipped run is not a failure', () => {
    expect(batchExitCode({ ...counts, status: 'COMPLETED', applied: 4, skipped: 1 })).toBe(0);
    expect(batchExitCode({ ...counts, status: 'COMPLETED', applied: 3, skipped: 1, failed: 1 })).toBe(3);
    expect(batchExitCode({ ...counts, status: 'STOPPED' })).toBe(3);
  });

  it('lists the skipped and failed runs with why, escaped, and counts the pending ones', () => {
    const items = [
      { runId: 'r1', outcome: 'APPLIED', error: null },
      { runId: 'r2', outcome: 'SKIPPED', error: 'run r2 is SUCCEEDED: only an active run can be paused' },
      { runId: 'r3', outcome: 'FAILED', error: 'boom\n\u001b[2J' },
      { runId: 'r4', outcome: 'PENDING', error: null },
      { runId: 'r5', outcome: 'PENDING', error: null },
    ];
    expect(notAppliedText(items)).toBe(
      'RUN  OUTCOME  ERROR\n' +
        'r2   SKIPPED  run r2 is SUCCEEDED: only an active run can be paused\n' +
        'r3   FAILED   boom\\n\\u001b[2J\n' +
        '2 runs PENDING: not acted on\n',
    );
    expect(notAppliedText(items.slice(0, 1))).toBe('');
    expect(notAppliedText([{ runId: 'r9', outcome: 'SKIPPED', error: 'x'.repeat(300) }])).toBe(`RUN  OUTCOME  ERROR\nr9   SKIPPED  ${'x'.repeat(199)}…\n`);
  });

  it('tables the batches', () => {
    expect(
      batchListTable([
        { ...counts, createdAt: '2030-01-01T12:00:00.123Z' },
        { id: 'b2', action: 'RETRY', status: 'COMPLETED', total: 120, applied: 100, skipped: 19, failed: 1, createdAt: '2030-01-01T11:00:00Z' },
      ]),
    ).toBe(
      'ID                                    ACTION  STATUS     TOTAL  APPLIED  SKIPPED  FAILED  CREATED\n' +
        `${ID}  PAUSE   RUNNING    5      2        1        0       2030-01-01T12:00:00Z\n` +
        'b2                                    RETRY   COMPLETED  120    100      19       1       2030-01-01T11:00:00Z\n',
    );
  });

  it('describes a batch: its fields, its filter on one line, then the runs not applied', () => {
    const text = batchDetailText(
      {
        ...counts,
        status: 'COMPLETED',
        applied: 4,
        filter: { status: 'RUNNING', labels: { team: 'pay' }, workflowId: null },
        fromNodeId: null,
        reason: 'maintenance',
        idempotencyKey: 'k1',
        createdAt: '2030-01-01T12:00:00Z',
        finishedAt: '2030-01-01T12:00:03Z',
      },
      [{ runId: 'r2', outcome: 'SKIPPED', error: 'run r2 is CANCELLED' }],
    );
    expect(text).toBe(
      `batch            ${ID}\n` +
        'action           PAUSE\n' +
        'status           COMPLETED\n' +
        'runs             5 (4 applied, 1 skipped, 0 failed, 0 pending)\n' +
        'filter           status=RUNNING labels={"team":"pay"}\n' +
        'reason           maintenance\n' +
        'idempotency key  k1\n' +
        'created          2030-01-01T12:00:00Z\n' +
        'finished         2030-01-01T12:00:03Z\n' +
        '\n' +
        'RUN  OUTCOME  ERROR\n' +
        'r2   SKIPPED  run r2 is CANCELLED\n',
    );
    expect(filterText({})).toBe('-');
    expect(filterText({ errorContains: 'a\nb' })).toBe('errorContains=a\\nb');
  });
});
