import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cli } from '../../../test/support/weft-cli.js';

describe('weft completion', () => {
  let dir: string;
  let script: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-completion-'));
    const r = await cli({}, 'completion', 'bash');
    expect(r.code).toBe(0);
    script = join(dir, 'weft.bash');
    await writeFile(script, r.stdout);
    await writeFile(join(dir, 'order-flow.yaml'), '');
    await mkdir(join(dir, 'definitions'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** What bash offers for the command line `words` (the last one being completed), with the script loaded. */
  async function offered(...words: string[]): Promise<string[]> {
    const program = `source ${JSON.stringify(script)}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _weft; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const { stdout } = await promisify(execFile)('bash', ['--norc', '-c', program], { cwd: dir });
    return stdout.split('\n').filter(Boolean);
  }

  it('offers bash the commands, the subcommands of a group and the options of a command', async () => {
    expect(await offered('weft', 'ru')).toEqual(['run', 'runs', 'run-status']);
    expect(await offered('weft', 'context', '')).toEqual(['add', 'use', 'list', 'remove', '-h', '--help']);
    expect(await offered('weft', 'runs', '--s')).toEqual(['--status', '--schedule', '--since']);
    expect(await offered('weft', 'runs', '--')).not.toContain('--first');
  });

  it('offers logs and its options', async () => {
    expect(await offered('weft', 'lo')).toEqual(['logs']);
    expect(await offered('weft', 'logs', 'r1', '-')).toEqual(expect.arrayContaining(['--node', '-f', '--follow']));
  });

  it('offers the values of an option with a fixed list, files after -f, and nothing for a free value', async () => {
    expect(await offered('weft', 'runs', '--status', '')).toEqual(['QUEUED', 'PENDING', 'RUNNING', 'PAUSED', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
    expect(await offered('weft', 'history', 'r1', '-o', 'y')).toEqual(['yaml']);
    expect(await offered('weft', 'validate', '-f', 'order')).toEqual(['order-flow.yaml']);
    expect(await offered('weft', 'runs', '--workflow', '')).toEqual([]);
  });

  it('offers the schedules subcommands, their options and the overlap policies', async () => {
    expect(await offered('weft', 'sche')).toEqual(['scheduler', 'schedules']);
    expect(await offered('weft', 'schedules', '')).toEqual(['create', 'list', 'describe', 'delete', 'pause', 'unpause', 'trigger', 'backfill', '-h', '--help']);
    expect(await offered('weft', 'schedules', 'create', '--c')).toEqual(['--cron', '--config', '--catch-up']);
    expect(await offered('weft', 'schedules', 'create', '--overlap', '')).toEqual(['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all']);
    expect(await offered('weft', 'schedules', 'backfill', 's1', '--')).toEqual(['--url', '--api-key', '--output', '--from', '--to', '--watch', '--help']);
    expect(await offered('weft', 'runs', '--sc')).toEqual(['--schedule']);
  });

  it('offers -o on every command that prints, workflows get, admin tenants, and folders after apply -f', async () => {
    const printing = [
      ['run', 'wf'],
      ['signal', 'r', 'go'],
      ['cancel', 'r'],
      ['retry', 'r'],
      ['apply'],
      ['deprecate', 'w', '1'],
      ['keys', 'create', 'k'],
      ['keys', 'revoke', 'k'],
      ['settings', 'get'],
      ['settings', 'retention', '30'],
    ];
    const admin = [
      ['admin', 'create-tenant', 't'],
      ['admin', 'create-key'],
      ['admin', 'tenants'],
      ['admin', 'tenant-weight', 't'],
      ['workflows', 'get', 'w'],
      ['schedules', 'trigger', 's'],
    ];
    for (const words of [...printing, ...admin])
      expect({ words, offered: await offered('weft', ...words, '--outp') }).toEqual({ words, offered: ['--output'] });
    expect(await offered('weft', 'workflows', '')).toEqual(['get', '--url', '--api-key', '-o', '--output', '-h', '--help']);
    expect(await offered('weft', 'workflows', 'get', 'w', '-o', '')).toEqual(['table', 'json', 'yaml']);
    expect(await offered('weft', 'admin', 'ten')).toEqual(['tenants', 'tenant-weight']);
    expect(await offered('weft', 'apply', '-f', 'def')).toEqual(['definitions']);
    expect(await offered('weft', 'apply', '-f', 'x.yaml', '-')).toEqual(expect.arrayContaining(['-f', '-R', '--recursive', '-o']));
  });

  it('does not take the value of an option for a command', async () => {
    expect(await offered('weft', 'runs', '--workflow', 'keys', '--l')).toEqual(['--label', '--limit']);
  });

  it('prints a zsh script that describes each command and registers itself', async () => {
    const r = await cli({}, 'completion', 'zsh');
    expect(r.stdout.startsWith('#compdef weft\n')).toBe(true);
    expect(r.stdout).toContain("'watch:follow a run'");
    expect(r.stdout).toContain("('runs|--status') compadd -- 'QUEUED' 'PENDING' 'RUNNING' 'PAUSED' 'SUCCEEDED' 'FAILED' 'CANCELLED' 'TIMED_OUT'; return ;;");
    expect(r.stdout).toContain('compdef _weft weft');
  });
});
