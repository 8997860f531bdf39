import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { link, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnvelope, readResultFile } from './result-file.js';

let dir: string;
const me = process.getuid?.();
const rules = { ownerUid: me, maxBytes: 100 };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-result-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readResultFile', () => {
  it('reads a regular file of the right owner within the cap', async () => {
    await writeFile(join(dir, 'ok.json'), '{"ok":true,"result":1}');
    expect(await readResultFile(join(dir, 'ok.json'), rules)).toBe('{"ok":true,"result":1}');
    expect(await readResultFile(join(dir, 'missing.json'), rules)).toBeUndefined();
  });

  it('returns at once for a FIFO nobody writes to, without reading it', async () => {
    execFileSync('mkfifo', [join(dir, 'fifo.json')]);
    await expect(readResultFile(join(dir, 'fifo.json'), rules)).rejects.toThrow('the result file was replaced by a FIFO; it is not read');
  });

  it('does not follow a symlink, to a secret or to an endless device', async () => {
    await symlink('/etc/shadow', join(dir, 'shadow.json'));
    await symlink('/dev/zero', join(dir, 'zero.json'));
    for (const name of ['shadow.json', 'zero.json']) {
      await expect(readResultFile(join(dir, name), rules)).rejects.toThrow('the result file was replaced by a symbolic link; it is not read');
    }
  });

  it('refuses a file of another owner, a hard link and a file over the cap', async () => {
    await writeFile(join(dir, 'mine.json'), '{}');
    await expect(readResultFile(join(dir, 'mine.json'), { ...rules, ownerUid: (me ?? 0) + 1 })).rejects.toThrow(/belongs to uid \d+, not the execution's \d+/);
    await link(join(dir, 'mine.json'), join(dir, 'linked.json'));
    await expect(readResultFile(join(dir, 'linked.json'), rules)).rejects.toThrow('the result file has other hard links; it is not read');
    await writeFile(join(dir, 'big.json'), 'x'.repeat(101));
    await expect(readResultFile(join(dir, 'big.json'), rules)).rejects.toThrow('the result exceeds 100 bytes (OUTPUT_TOO_LARGE)');
  });
});

describe('parseEnvelope', () => {
  it('gives the envelope, null for a crash mid-write, and an error for garbage after a clean exit', () => {
    expect(parseEnvelope('{"ok":false,"kind":"syntax","message":"m"}', true)).toEqual({ ok: false, kind: 'syntax', message: 'm' });
    expect(parseEnvelope(undefined, true)).toBeNull();
    expect(parseEnvelope('{"ok":tr', false)).toBeNull();
    expect(() => parseEnvelope('{not json', true)).toThrow(/^the result is not valid JSON: /);
    expect(parseEnvelope('[1]', true)).toBeNull();
  });
});
