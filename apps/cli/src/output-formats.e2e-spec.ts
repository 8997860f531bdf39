import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import type { WeftClient } from '@weft/client';
import { publish, start, startE2E, waitRun, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** A FORK alone completes as the run starts: a run that needs no worker. */
const QUICK = { nodes: [{ node_id: 'only', type: 'FORK' }], edges: [] };

/**
 * The client commands that act (apply, run, signal, cancel, keys, deprecate, schedules) and
 * `workflows get` against a whole Weft: what each prints for people, as JSON and as YAML (the
 * same object), `apply -f` with folders and several files one of which is refused, and
 * definitions printed by `workflows get` applied again.
 */
describe('weft output formats and apply -f', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let dir: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  /** `weft <args> -o json`, which must exit 0 with nothing on stderr; resolves what it printed, parsed. */
  async function asJson(...args: string[]): Promise<any> {
    const json = await weft(...args, '-o', 'json');
    expect({ args, code: json.code, stderr: json.stderr }).toEqual({ args, code: 0, stderr: '' });
    return JSON.parse(json.stdout);
  }
  const latest = async (id: string) =>
    (await client.request(`query($id: String!) { workflow(workflowId: $id) { latestVersion } }`, { id })).workflow.latestVersion as number;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('cli-output'));
    dir = await mkdtemp(join(tmpdir(), 'weft-output-e2e-'));
    await publish(client, 'quick', QUICK);
    await publish(client, 'approval', {
      nodes: [
        { node_id: 'approval', type: 'WAIT_FOR_EVENT', spec: { event: 'approve' } },
        { node_id: 'shipped', type: 'WAIT_FOR_EVENT', spec: { event: 'ship' } },
      ],
      edges: [{ from: 'approval', to: 'shipped' }],
    });
  });
  afterAll(async () => {
    await e2e.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('apply -f', () => {
    let defs: string;
    beforeAll(async () => {
      defs = join(dir, 'defs');
      await mkdir(join(defs, 'nested'), { recursive: true });
      await writeFile(join(defs, 'alpha.yaml'), 'nodes:\n  - {node_id: a, type: FORK}\n');
      await writeFile(join(defs, 'beta.json'), JSON.stringify({ nodes: [{ node_id: 'b', type: 'FORK' }] }));
      await writeFile(join(defs, 'broken.yml'), 'nodes:\n  - {node_id: x, type: TELEPORT}\n');
      await writeFile(join(defs, 'named.yaml'), 'workflow_id: gamma\nnodes:\n  - {node_id: g, type: FORK}\n');
      await writeFile(join(defs, 'notes.txt'), 'not a definition');
      await writeFile(join(defs, 'nested', 'delta.yaml'), 'nodes:\n  - {node_id: d, type: FORK}\n');
    });

    it('applies every definition of a folder in name order, names the one refused with its problem, and exits 1', async () => {
      const r = await weft('apply', '-f', defs);
      expect(r.code).toBe(1);
      expect(r.stdout.trimEnd().split('\n')).toEqual([
        `workflow alpha version 1 (${join(defs, 'alpha.yaml')})`,
        `workflow beta version 1 (${join(defs, 'beta.json')})`,
        `workflow gamma version 1 (${join(defs, 'named.yaml')})`,
      ]);
      const errors = r.stderr.trimEnd().split('\n');
      expect(errors[0]).toBe(`error: ${join(defs, 'broken.yml')}: BAD_USER_INPUT: invalid workflow definition: 1 problem(s)`);
      expect(errors[1]).toMatch(/^ {2}- nodes\[0\]\.type \(node x\): /);
      expect(errors.at(-1)).toBe(`error: 1 of 4 definition files not applied: ${join(defs, 'broken.yml')}`);
      // Not recursive: the nested folder's definition was left alone.
      await expect(client.request(`{ workflow(workflowId: "delta") { id } }`)).rejects.toThrow(/NOT_FOUND/);
    });

    it('with -R takes subfolders; -o json and -o yaml print the list of versions applied', async () => {
      const json = await weft('apply', '-f', defs, '-R', '-o', 'json');
      expect(json.code).toBe(1);
      const applied = JSON.parse(json.stdout);
      expect(applied.map((a: { workflowId: string }) => a.workflowId)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
      // Identical definitions answer the version they equal.
      expect(applied[0]).toEqual({ file: join(defs, 'alpha.yaml'), workflowId: 'alpha', version: 1, createdAt: expect.any(String) });
      expect(applied[3]).toMatchObject({ file: join(defs, 'nested', 'delta.yaml'), workflowId: 'delta', version: 1 });
      const yaml = await weft('apply', '-f', defs, '-R', '-o', 'yaml');
      expect(YAML.parse(yaml.stdout)).toEqual(applied);
      expect(yaml.stderr).toContain(join(defs, 'broken.yml'));
    });

    it('takes -f several times, in the order given, and tries the files after a missing one', async () => {
      await writeFile(join(dir, 'alpha.yaml'), 'nodes:\n  - {node_id: a2, type: FORK}\n');
      const missing = join(dir, 'missing.yaml');
      const r = await weft('apply', '-f', join(dir, 'alpha.yaml'), '-f', missing, '-f', join(defs, 'beta.json'), '-o', 'json');
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout).map((a: { workflowId: string; version: number }) => [a.workflowId, a.version])).toEqual([
        ['alpha', 2],
        ['beta', 1],
      ]);
      expect(r.stderr).toBe(`error: ${missing}: cannot read ${missing}: no such file\nerror: 1 of 3 definition files not applied: ${missing}\n`);
    });

    it('prints one object for one file, and refuses --id or --name with several files', async () => {
      const one = await weft('apply', '-f', join(defs, 'alpha.yaml'), '--id', 'alpha-copy', '-o', 'json');
      expect(one.code).toBe(0);
      expect(JSON.parse(one.stdout)).toEqual({ file: join(defs, 'alpha.yaml'), workflowId: 'alpha-copy', version: 1, createdAt: expect.any(String) });
      for (const flag of ['--id', '--name']) {
        const r = await weft('apply', '-f', defs, flag, 'x');
        expect(r.code).toBe(2);
        expect(r.stderr.split('\n')[0]).toBe(
          `error: ${flag} names one workflow: give it with a single file (each of several files takes its id from its workflow_id, else its file name)`,
        );
        expect(r.stdout).toBe('');
      }
      const empty = join(dir, 'empty');
      await mkdir(empty);
      expect(await weft('apply', '-f', empty)).toMatchObject({ code: 1, stderr: expect.stringContaining(`no *.yaml, *.yml, *.json file in folder ${empty}`) });
    });
  });

  describe('workflows get', () => {
    it('prints the YAML as published, which applies again as the same version', async () => {
      const file = join(ROOT, 'examples/order-flow.yaml');
      const source = await readFile(file, 'utf8');
      expect((await weft('apply', '-f', file)).code).toBe(0);
      const yaml = await weft('workflows', 'get', 'order-flow', '-o', 'yaml');
      expect(yaml).toEqual({ code: 0, stdout: source, stderr: '' });
      const again = join(dir, 'order-flow.yaml');
      await writeFile(again, yaml.stdout);
      expect(JSON.parse((await weft('apply', '-f', again, '-o', 'json')).stdout)).toMatchObject({ workflowId: 'order-flow', version: 1 });
      expect(await latest('order-flow')).toBe(1);
    });

    it('prints a definition published as JSON as YAML and as JSON, each applying again as the same version', async () => {
      const json = await weft('workflows', 'get', 'quick', '-o', 'json');
      expect(JSON.parse(json.stdout)).toEqual(QUICK);
      const yaml = await weft('workflows', 'get', 'quick', '-o', 'yaml');
      expect(YAML.parse(yaml.stdout)).toEqual(QUICK);
      for (const [name, text] of [
        ['quick.json', json.stdout],
        ['quick.yaml', yaml.stdout],
      ]) {
        await writeFile(join(dir, name), text);
        expect(JSON.parse((await weft('apply', '-f', join(dir, name), '-o', 'json')).stdout)).toMatchObject({ workflowId: 'quick', version: 1 });
      }
      expect(await latest('quick')).toBe(1);
    });

    it('prints a summary for people, an older version with --version, and NOT_FOUND for an unknown one', async () => {
      await publish(client, 'quick', {
        nodes: [
          { node_id: 'one', type: 'FORK' },
          { node_id: 'two', type: 'FORK' },
        ],
        edges: [{ from: 'one', to: 'two' }],
      });
      const r = await weft('workflows', 'get', 'quick');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^workflow\s+quick\nversion\s+2 \(default, latest\)\ncreated\s+\S+Z by admin\nchecksum\s+[0-9a-f]{64}\nnodes\s+2\nedges\s+1\n/);
      expect(JSON.parse((await weft('workflows', 'get', 'quick', '--version', '1', '-o', 'json')).stdout)).toEqual(QUICK);
      const unknown = await weft('workflows', 'get', 'quick', '--version', '9');
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(unknown.stderr).toMatch(/^error: NOT_FOUND: /);
    });
  });

  describe('the commands that act', () => {
    it('run prints the run as started; run --watch -o json one JSON object per update, the last the run as it ended', async () => {
      expect((await weft('run', 'quick')).stdout).toMatch(/^run \S+ (RUNNING|SUCCEEDED)\n$/);
      const started = await asJson('run', 'quick', '--input', '{"n": 1}');
      expect(started).toMatchObject({
        id: expect.any(String),
        workflowId: 'quick',
        version: 2,
        status: expect.stringMatching(/^(RUNNING|SUCCEEDED)$/),
        priority: 3,
      });
      const yaml = await weft('run', 'quick', '--idempotency-key', 'same', '-o', 'yaml');
      expect(YAML.parse(yaml.stdout)).toEqual(await asJson('run', 'quick', '--idempotency-key', 'same'));

      const watched = await weft('run', 'quick', '--watch', '-o', 'json');
      expect(watched.code).toBe(0);
      const updates = watched.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(updates.at(-1)).toMatchObject({ workflowId: 'quick', status: 'SUCCEEDED', tasks: [{ nodeId: 'one' }, { nodeId: 'two' }] });
      const docs = YAML.parseAllDocuments((await weft('run', 'quick', '--watch', '-o', 'yaml')).stdout).map((d) => d.toJSON());
      expect(docs.at(-1)).toMatchObject({ status: 'SUCCEEDED' });
    });

    it('signal and cancel print what they did; cancelling an ended run is a conflict, exit code 4', async () => {
      const runId = await start(client, 'approval');
      await waitRun(client, runId, (r) => r.tasks.some((t: { status: string }) => t.status === 'WAITING'));
      expect(await asJson('signal', runId, 'ship')).toEqual({ runId, name: 'ship', delivered: false });
      expect(YAML.parse((await weft('signal', runId, 'approve', '--payload', '{"ok": true}', '-o', 'yaml')).stdout)).toEqual({
        runId,
        name: 'approve',
        delivered: true,
      });
      await waitRun(client, runId);
      const refused = await weft('cancel', runId, '-o', 'json');
      expect(refused).toMatchObject({ code: 4, stdout: '' });
      expect(refused.stderr).toMatch(/^error: CONFLICT: /);

      const waiting = await start(client, 'approval');
      const cancelled = await asJson('cancel', waiting, '--reason', 'no longer needed');
      expect(cancelled).toMatchObject({ id: waiting, status: 'CANCELLED', workflowId: 'approval' });
      expect((await weft('cancel', await start(client, 'approval'))).stdout).toMatch(/^run \S+ CANCELLED\n$/);
    });

    it('keys create prints the secret once in JSON or YAML; keys revoke and deprecate print what they changed', async () => {
      const created = JSON.parse((await weft('keys', 'create', 'bot', '--role', 'viewer')).stdout);
      expect(created).toEqual({
        id: expect.any(String),
        name: 'bot',
        role: 'viewer',
        keyPrefix: expect.any(String),
        createdAt: expect.any(String),
        secret: expect.stringMatching(/^weft_/),
      });
      const yaml = YAML.parse((await weft('keys', 'create', 'bot2', '--role', 'operator', '-o', 'yaml')).stdout);
      expect(yaml).toMatchObject({ name: 'bot2', role: 'operator', secret: expect.stringMatching(/^weft_/) });
      const revoked = await asJson('keys', 'revoke', created.id);
      expect(revoked).toEqual({
        id: created.id,
        name: 'bot',
        role: 'viewer',
        keyPrefix: created.keyPrefix,
        createdAt: created.createdAt,
        revokedAt: expect.any(String),
      });

      expect(await asJson('deprecate', 'quick', '1')).toEqual({ workflowId: 'quick', version: 1, deprecated: true, deprecatedAt: expect.any(String) });
      const restored = YAML.parse((await weft('deprecate', 'quick', '1', '--restore', '-o', 'yaml')).stdout);
      expect(restored).toEqual({ workflowId: 'quick', version: 1, deprecated: false, deprecatedAt: null });
    });

    it('schedules pause, unpause, trigger and delete print the schedule or the fire', async () => {
      const { id } = await asJson('schedules', 'create', '--workflow', 'quick', '--every', '1d', '--paused');
      expect(await asJson('schedules', 'pause', id, '--note', 'hold')).toMatchObject({ id, paused: true, pauseNote: 'hold', pausedAt: expect.any(String) });
      expect(await asJson('schedules', 'unpause', id)).toMatchObject({ id, paused: false, nextFireAt: expect.any(String) });
      const fire = await asJson('schedules', 'trigger', id);
      expect(fire).toMatchObject({ outcome: 'STARTED', reason: null, run: { id: expect.any(String) }, cancelledRunIds: [] });
      expect(YAML.parse((await weft('schedules', 'delete', id, '-o', 'yaml')).stdout)).toEqual({
        id,
        workflowId: 'quick',
        deleted: true,
        backfillsDeleted: 0,
        firedCount: 1,
      });
    });
  });
});
