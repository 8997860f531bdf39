import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configPath, loadCliConfig, saveCliConfig } from './cli-config.js';

describe('the CLI config file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-config-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('lives at $WEFT_CONFIG, else under $XDG_CONFIG_HOME, else under ~/.config', () => {
    expect(configPath({ WEFT_CONFIG: '/etc/w.yaml', XDG_CONFIG_HOME: '/x' })).toBe('/etc/w.yaml');
    expect(configPath({ XDG_CONFIG_HOME: '/x' })).toBe('/x/weft/config.yaml');
    expect(configPath({ XDG_CONFIG_HOME: '' })).toBe(join(homedir(), '.config/weft/config.yaml'));
  });

  it('is empty when missing, and written for its owner only, in a folder it creates', async () => {
    const path = join(dir, 'new/weft/config.yaml');
    expect(await loadCliConfig(path)).toEqual({ contexts: {} });
    const config = { current_context: 'dev', contexts: { dev: { url: 'http://127.0.0.1:4000/graphql', api_key: 'weft_secret' } } };
    await saveCliConfig(path, config);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'new/weft'))).mode & 0o777).toBe(0o700);
    expect(await loadCliConfig(path)).toEqual(config);
    expect(await readFile(path, 'utf8')).toContain('current_context: dev\n');
  });

  it('makes a file others could read private again when it rewrites it', async () => {
    const path = join(dir, 'shared.yaml');
    await writeFile(path, 'contexts: {}\n', { mode: 0o644 });
    await saveCliConfig(path, { contexts: {} });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('names the file when it is not YAML or not shaped as contexts', async () => {
    const path = join(dir, 'bad.yaml');
    await writeFile(path, 'contexts: [\n');
    await expect(loadCliConfig(path)).rejects.toThrow(`the config file ${path} is not YAML`);
    await writeFile(path, 'contexts:\n  dev: {url: http://h/graphql}\n');
    await expect(loadCliConfig(path)).rejects.toThrow(`the config file ${path} is malformed: context "dev" needs a url and an api_key`);
    await writeFile(path, '- a\n');
    await expect(loadCliConfig(path)).rejects.toThrow(/is malformed: it must be a mapping/);
  });
});
