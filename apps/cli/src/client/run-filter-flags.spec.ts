import { describe, expect, it } from '@jest/globals';
import { Command } from 'commander';
import { isEmptyFilter, runFilterOf, withRunFilter, type RunFilterFlags } from './run-filter-flags.js';

/** The flags `args` give a command with the run filter flags, as commander parses them. */
function parsed(...args: string[]): RunFilterFlags {
  const cmd = withRunFilter(new Command('x').exitOverride().configureOutput({ writeErr: () => {} }));
  cmd.parse(args, { from: 'user' });
  return cmd.opts<RunFilterFlags>();
}

describe('run filter flags', () => {
  const now = Date.parse('2030-01-02T00:00:00Z');

  it('become the API filter, lengths of time counted back from now', () => {
    const flags = parsed(
      '--status',
      'failed',
      '--workflow',
      'orders',
      '--label',
      'team=pay',
      '--label',
      'env=prod',
      '--since',
      '1d',
      '--finished-before',
      '2030-01-01T06:00:00Z',
      '--failed-node',
      'charge',
      '--error',
      'declined',
    );
    expect(runFilterOf(flags, now)).toEqual({
      status: 'FAILED',
      workflowId: 'orders',
      scheduleId: undefined,
      createdAfter: '2030-01-01T00:00:00.000Z',
      labels: { team: 'pay', env: 'prod' },
      failedNodeId: 'charge',
      errorContains: 'declined',
      finishedAfter: undefined,
      finishedBefore: '2030-01-01T06:00:00Z',
    });
  });

  it('tell an empty filter from one with a condition', () => {
    expect(isEmptyFilter(runFilterOf(parsed(), now))).toBe(true);
    expect(isEmptyFilter(runFilterOf(parsed('--schedule', 's1'), now))).toBe(false);
    expect(isEmptyFilter(runFilterOf(parsed('--finished-after', '2h'), now))).toBe(false);
  });

  it('refuse a malformed value before anything is sent', () => {
    expect(() => parsed('--status', 'DONE')).toThrow(/must be one of QUEUED, PENDING, RUNNING, PAUSED/);
    expect(() => parsed('--label', 'team')).toThrow(/must be KEY=VALUE/);
    expect(() => parsed('--since', 'yesterday')).toThrow(/must be a length of time/);
  });
});
