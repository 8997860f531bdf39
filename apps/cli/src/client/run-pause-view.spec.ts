import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { runStatus } from './arguments.js';
import { pausedLine } from './run-control-commands.js';
import { runsTable, type ListedRun } from './run-read-commands.js';
import { runStatusTable } from './run-view.js';
import { watchRun } from './run-watch.js';
import { pauseText } from './wait-text.js';

/** A run as `runs` lists it, RUNNING unless `over` says otherwise. */
function listed(over: Partial<ListedRun>): ListedRun {
  return {
    id: 'r1',
    status: 'RUNNING',
    workflowId: 'orders',
    version: 1,
    priority: 3,
    labels: {},
    waitReason: null,
    waitDetail: null,
    pausedAt: null,
    pauseReason: null,
    createdAt: '2030-01-01T00:00:00Z',
    finishedAt: null,
    ...over,
  } as ListedRun;
}

/** What {@link watchRun} prints in table form for these updates of run `r1`. */
async function watched(updates: Record<string, unknown>[]): Promise<string[]> {
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
  return out.split('\n');
}

describe('paused runs for people', () => {
  it('pause and resume print the run with its status, a PAUSED one with why, its reason escaped', () => {
    expect(pausedLine({ id: 'r1', status: 'PAUSED', pauseReason: 'maintenance window' })).toBe('run r1 PAUSED (maintenance window)\n');
    expect(pausedLine({ id: 'r1', status: 'PAUSED', pauseReason: 'db\n\u001b[2Jdown' })).toBe('run r1 PAUSED (db\\n\\u001b[2Jdown)\n');
    expect(pausedLine({ id: 'r1', status: 'RUNNING', pauseReason: null })).toBe('run r1 RUNNING\n');
    expect(pausedLine({ id: 'r1', status: 'QUEUED', pauseReason: null })).toBe('run r1 QUEUED\n');
  });

  it('says why a run is paused only while it is PAUSED', () => {
    expect(pauseText({ status: 'PAUSED', pauseReason: 'node charge exhausted its 3 attempts: card declined' })).toBe(
      'paused: node charge exhausted its 3 attempts: card declined',
    );
    expect(pauseText({ status: 'PAUSED', pauseReason: null })).toBe('paused');
    expect(pauseText({ status: 'RUNNING', pauseReason: 'stale' })).toBe('');
  });

  it('takes PAUSED as a run status in any case', () => {
    expect(runStatus('paused')).toBe('PAUSED');
    expect(() => runStatus('halted')).toThrow(
      new InvalidArgumentError('must be one of QUEUED, PENDING, RUNNING, PAUSED, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT'),
    );
  });

  it('lists a PAUSED run with its pause reason in the WAITING column', () => {
    const runs = [
      listed({ id: 'r2', status: 'PAUSED', pausedAt: '2030-01-01T00:00:03Z', pauseReason: 'maintenance window' }),
      listed({ id: 'r1', status: 'RUNNING' }),
    ];
    expect(runsTable(runs, Date.parse('2030-01-01T00:00:05Z')).split('\n')).toEqual([
      'ID  WORKFLOW  VERSION  STATUS   PRIORITY  CREATED               DURATION  WAITING',
      'r2  orders    1        PAUSED   3         2030-01-01T00:00:00Z  5s        paused: maintenance window',
      'r1  orders    1        RUNNING  3         2030-01-01T00:00:00Z  5s',
      '',
    ]);
  });

  it('run-status shows since when and why a run is paused, and each task its pause holds', () => {
    const view = {
      id: 'r1',
      workflowId: 'gated',
      version: 1,
      status: 'PAUSED',
      pausedAt: '2030-01-01T00:00:03.250Z',
      pauseReason: 'maintenance window',
      createdAt: '2030-01-01T00:00:00Z',
      finishedAt: null,
      tasks: [
        { nodeId: 'gate', nodeType: 'WAIT_FOR_EVENT', status: 'COMPLETED', attempt: 0 },
        { nodeId: 'after', nodeType: 'CODE', status: 'QUEUED', attempt: 0, waitReason: 'RUN_PAUSED', waitDetail: 'run paused: maintenance window' },
      ],
    };
    const out = runStatusTable(view, undefined, Date.parse('2030-01-01T00:00:05Z'));
    expect(out).toMatch(/^run\s+r1\nworkflow\s+gated version 1\nstatus\s+PAUSED\n/);
    expect(out).toContain('\npaused    since 2030-01-01T00:00:03Z: maintenance window\n');
    expect(out).toMatch(/\nafter\s+QUEUED\s+1\s+RUN_PAUSED: run paused: maintenance window\n/);
    expect(runStatusTable({ ...view, status: 'RUNNING', pausedAt: null, pauseReason: null }, undefined, 0)).not.toContain('paused ');
  });

  it('run-status shows the deadline of a run still going, not of one that ended', () => {
    const view = {
      id: 'r1',
      workflowId: 'timed',
      version: 1,
      status: 'RUNNING',
      deadlineAt: '2030-01-01T01:00:00.000Z',
      createdAt: '2030-01-01T00:00:00Z',
      finishedAt: null,
      tasks: [],
    };
    expect(runStatusTable(view, undefined, Date.parse('2030-01-01T00:00:05Z'))).toContain('\ndeadline  2030-01-01T01:00:00Z\n');
    const ended = { ...view, status: 'TIMED_OUT', error: 'run exceeded timeout_seconds 3600', finishedAt: '2030-01-01T01:00:00.100Z' };
    const out = runStatusTable(ended, undefined, Date.parse('2030-01-01T02:00:00Z'));
    expect(out).not.toContain('deadline');
    expect(out).toContain('run exceeded timeout_seconds 3600');
  });

  it('keeps watching a paused run: a line when it is paused, one when it is resumed, until it ends', async () => {
    const after = (status: string, waitReason: string | null = null, waitDetail: string | null = null) => ({
      nodeId: 'after',
      status,
      attempt: 0,
      error: null,
      awaitedSignal: null,
      iteration: null,
      waitReason,
      waitDetail,
    });
    const run = (status: string, pauseReason: string | null, tasks: unknown[]) => ({ status, waitReason: null, waitDetail: null, pauseReason, tasks });
    const lines = await watched([
      run('RUNNING', null, []),
      run('PAUSED', 'maintenance window', []),
      run('PAUSED', 'maintenance window', [after('QUEUED', 'RUN_PAUSED', 'run paused: maintenance window')]),
      run('RUNNING', null, [after('RUNNING')]),
      run('SUCCEEDED', null, [after('COMPLETED')]),
    ]);
    expect(lines).toEqual([
      'run: PAUSED (maintenance window)',
      'after: QUEUED (RUN_PAUSED: run paused: maintenance window)',
      'run: RUNNING',
      'after: RUNNING',
      'after: COMPLETED',
      '',
    ]);
  });
});
