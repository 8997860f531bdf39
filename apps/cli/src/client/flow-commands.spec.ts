import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { priority, runStatus } from './arguments.js';
import { keysTable, rateLimitsTable } from './flow-commands.js';
import { runStatusTable } from './run-view.js';
import { watchRun } from './run-watch.js';
import { waitText } from './wait-text.js';

describe('flow control for people', () => {
  it('lists concurrency keys: a tenant-wide key without a workflow, a workflow’s one group as ""', () => {
    const rows = [
      { scope: 'workflow', workflowId: 'orders', key: 'acme', limit: 2, active: 2, queued: 3 },
      { scope: 'workflow', workflowId: 'nightly', key: '', limit: 1, active: 0, queued: 0 },
      { scope: 'tenant', workflowId: null, key: 'db\nx', limit: 10, active: 1, queued: 0 },
    ];
    expect(keysTable(rows).split('\n')).toEqual([
      'SCOPE     WORKFLOW  KEY    LIMIT  ACTIVE  QUEUED',
      'workflow  orders    acme   2      2       3',
      'workflow  nightly   ""     1      0       0',
      'tenant    -         db\\nx  10     1       0',
      '',
    ]);
  });

  it('lists rate limits with their window in seconds and the next start of a held attempt', () => {
    const rows = [
      { key: 'partner', limit: 20, perSeconds: 1, startedInWindow: 20, held: 4, nextStartAt: '2030-01-01T12:00:01.250Z' },
      { key: 'gone', limit: null, perSeconds: null, startedInWindow: 0, held: 0, nextStartAt: null },
    ];
    expect(rateLimitsTable(rows).split('\n')).toEqual([
      'KEY      LIMIT  WINDOW  STARTED  HELD  NEXT START',
      'partner  20     1s      20       4     2030-01-01T12:00:01.250Z',
      'gone     -      -       0        0     -',
      '',
    ]);
  });

  it('says why a run or task waits: the reason and the sentence, the sentence alone for a backoff', () => {
    expect(waitText({ waitReason: 'RATE_LIMIT', waitDetail: 'rate limit "partner" 20 per 1 s, next start 12:00:01.250Z' })).toBe(
      'RATE_LIMIT: rate limit "partner" 20 per 1 s, next start 12:00:01.250Z',
    );
    expect(waitText({ waitReason: null, waitDetail: 'retry backoff until 2030-01-01T00:00:00.000Z' })).toBe('retry backoff until 2030-01-01T00:00:00.000Z');
    expect(waitText({ waitReason: null, waitDetail: null })).toBe('');
  });

  it('shows a QUEUED run’s priority, key and wait, and each QUEUED task’s wait, in run-status', () => {
    const view = {
      id: 'r1',
      workflowId: 'orders',
      version: 1,
      status: 'QUEUED',
      priority: 2,
      concurrencyKey: 'acme',
      waitReason: 'CONCURRENCY_LIMIT',
      waitDetail: 'concurrency limit 2 reached for key "acme" (2 active, 3 queued)',
      createdAt: '2030-01-01T00:00:00Z',
      finishedAt: null,
      tasks: [
        {
          nodeId: 'call',
          nodeType: 'HTTP',
          status: 'QUEUED',
          attempt: 0,
          waitReason: 'QUEUE_BACKLOG',
          waitDetail: 'waiting for a worker slot on queue "http"',
        },
      ],
    };
    const out = runStatusTable(view, undefined, Date.parse('2030-01-01T00:00:05Z'));
    expect(out).toContain('priority         2\n');
    expect(out).toContain('concurrency key  acme\n');
    expect(out).toContain('waiting          CONCURRENCY_LIMIT: concurrency limit 2 reached for key "acme" (2 active, 3 queued)\n');
    expect(out).toMatch(/call\s+QUEUED\s+1\s+QUEUE_BACKLOG: waiting for a worker slot on queue "http"\n/);
  });

  it('takes a priority from 1 to 5 and QUEUED as a run status', () => {
    expect(['1', '5', ' 3 '].map(priority)).toEqual([1, 5, 3]);
    for (const bad of ['0', '6', '2.5', 'high', '']) expect(() => priority(bad)).toThrow(new InvalidArgumentError('must be an integer from 1 (first) to 5'));
    expect(runStatus('queued')).toBe('QUEUED');
  });

  it('prints in --watch why a QUEUED run and its QUEUED tasks wait, each time it changes', async () => {
    const task = (status: string, waitReason: string | null, waitDetail: string | null) => ({
      nodeId: 'call',
      status,
      attempt: 0,
      error: null,
      awaitedSignal: null,
      iteration: null,
      waitReason,
      waitDetail,
    });
    const updates = [
      { status: 'QUEUED', waitReason: 'CONCURRENCY_LIMIT', waitDetail: 'concurrency limit 1 reached for key "acme" (1 active, 1 queued)', tasks: [] },
      { status: 'QUEUED', waitReason: 'CONCURRENCY_LIMIT', waitDetail: 'concurrency limit 1 reached for key "acme" (1 active, 1 queued)', tasks: [] },
      {
        status: 'RUNNING',
        waitReason: null,
        waitDetail: null,
        tasks: [task('QUEUED', 'RATE_LIMIT', 'rate limit "partner" 1 per 60 s, next start 12:00:00.000Z')],
      },
      { status: 'RUNNING', waitReason: null, waitDetail: null, tasks: [task('QUEUED', 'QUEUE_BACKLOG', 'waiting for a worker slot on queue "http"')] },
      { status: 'SUCCEEDED', waitReason: null, waitDetail: null, tasks: [task('COMPLETED', null, null)] },
    ];
    const client = {
      subscribe: (_q: string, _v: unknown, next: (data: unknown) => boolean) => {
        for (const u of updates) if (!next({ runUpdated: u })) break;
        return { done: Promise.resolve() };
      },
    };
    let out = '';
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
    try {
      await watchRun(client as never, 'r1');
    } finally {
      process.stdout.write = write;
    }
    expect(out.split('\n')).toEqual([
      'run: QUEUED (CONCURRENCY_LIMIT: concurrency limit 1 reached for key "acme" (1 active, 1 queued))',
      'run: RUNNING',
      'call: QUEUED (RATE_LIMIT: rate limit "partner" 1 per 60 s, next start 12:00:00.000Z)',
      'call: QUEUED (QUEUE_BACKLOG: waiting for a worker slot on queue "http")',
      'call: COMPLETED',
      '',
    ]);
  });
});
