import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonOption, JsonFileArgument, readJsonOptions, since } from './arguments.js';

describe('--since', () => {
  it('takes lengths of time with units, several in a row', () => {
    expect(since('30m')).toEqual({ agoMs: 1_800_000 });
    expect(since('1h30m')).toEqual({ agoMs: 5_400_000 });
    expect(since('7d')).toEqual({ agoMs: 604_800_000 });
    expect(since('90s')).toEqual({ agoMs: 90_000 });
  });

  it('takes an RFC 3339 time with an offset', () => {
    expect(since('2030-01-01T00:00:00Z')).toEqual({ at: '2030-01-01T00:00:00Z' });
    expect(since('2030-01-01T00:00:00.5+02:00')).toEqual({ at: '2030-01-01T00:00:00.5+02:00' });
  });

  it('refuses anything else', () => {
    for (const bad of ['1', '1y', 'h', '0m', '2030-01-01', '2030-01-01T00:00:00', 'yesterday']) expect(() => since(bad)).toThrow(/must be|longer than 0/);
  });
});

describe('JSON options', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-args-'));
    await writeFile(join(dir, 'in.json'), '{"order_id": 7}\n');
    await writeFile(join(dir, 'bad.json'), 'order_id: 7\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('parses inline JSON at once and refuses malformed text as a usage error', () => {
    expect(jsonOption('--input')('{"a": [1]}')).toEqual({ a: [1] });
    expect(() => jsonOption('--input')('{a')).toThrow(/^--input must be JSON, or @FILE/);
    expect(() => jsonOption('--input')('@')).toThrow('--input @ needs a file name');
  });

  it('reads @FILE when the command runs, naming the file when it is missing or not JSON', async () => {
    const input = jsonOption('--input')(`@${join(dir, 'in.json')}`);
    expect(input).toBeInstanceOf(JsonFileArgument);
    expect(await readJsonOptions({ input, config: { kept: true } })).toEqual({ input: { order_id: 7 }, config: { kept: true } });
    const missing = join(dir, 'nope.json');
    await expect(readJsonOptions({ input: jsonOption('--input')(`@${missing}`) })).rejects.toThrow(`--input: cannot read file ${missing}: no such file`);
    await expect(readJsonOptions({ config: jsonOption('--config')(`@${join(dir, 'bad.json')}`) })).rejects.toThrow(
      `--config: file ${join(dir, 'bad.json')} is not JSON (`,
    );
    await expect(readJsonOptions({ config: jsonOption('--config')(`@${dir}`) })).rejects.toThrow(`--config: cannot read file ${dir}: it is a folder`);
  });

  it('lets one option only read stdin', async () => {
    await expect(readJsonOptions({ input: jsonOption('--input')('@-'), config: jsonOption('--config')('@-') })).rejects.toThrow(
      'only one option can read stdin: --input @-, --config @-',
    );
  });
});
