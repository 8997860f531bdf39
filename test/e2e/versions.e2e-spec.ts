import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { WeftClient as Client } from '@weft/client';
import { jsNode, rejection, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';
import { runWeft } from '../support/cli.js';

/** A one-node workflow whose output names the version it ran on. */
const quick = (mark: number) => ({ nodes: [jsNode('mark', `return {version: ${mark}};`)], edges: [] });

/** Waits for the signal `go` before its output names the version it ran on. */
const gated = (mark: number) => ({
  nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 120 } }, jsNode('mark', `return {version: ${mark}};`)],
  edges: [{ from: 'gate', to: 'mark' }],
});

const WORKFLOW = `id name latestVersion defaultVersion pinnedVersion
  versions { version createdAt createdBy deprecated deprecatedAt checksum }`;
const VERSION = 'workflowId version createdBy deprecated deprecatedAt checksum source';

describe('definition versions managed by tenant admins, end to end', () => {
  let e2e: E2E;
  let admin: WeftClient;
  let apiKey: string;

  const publishV = async (c: WeftClient, workflowId: string, definition: unknown, name?: string) =>
    (
      await c.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { ${VERSION} } }`, {
        i: { workflowId, name, definition: typeof definition === 'string' ? definition : JSON.stringify(definition) },
      })
    ).publishWorkflow;
  const workflow = async (c: WeftClient, id: string) => (await c.request(`query($id: String!) { workflow(workflowId: $id) { ${WORKFLOW} } }`, { id })).workflow;
  const setDefault = async (c: WeftClient, id: string, version: number | null) =>
    (await c.request(`mutation($id: String!, $v: Int) { setDefaultVersion(workflowId: $id, version: $v) { ${WORKFLOW} } }`, { id, v: version }))
      .setDefaultVersion;
  const deprecate = async (c: WeftClient, id: string, version: number, deprecated = true) =>
    (
      await c.request(`mutation($id: String!, $v: Int!, $d: Boolean) { deprecateVersion(workflowId: $id, version: $v, deprecated: $d) { ${VERSION} } }`, {
        id,
        v: version,
        d: deprecated,
      })
    ).deprecateVersion;
  const startRun = async (c: WeftClient, workflowId: string, extra: Record<string, unknown> = {}) =>
    (await c.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id version } }`, { i: { workflowId, ...extra } })).startRun as {
      id: string;
      version: number;
    };
  const signal = (c: WeftClient, runId: string, name: string) =>
    c.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name } });
  const retry = async (c: WeftClient, runId: string, fromNodeId: string, version?: number) =>
    (await c.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id version status } }`, { i: { runId, fromNodeId, version } })).retryRun;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client: admin, apiKey } = await e2e.tenant('versions'));
  });
  afterAll(() => e2e.close());

  it('returns the latest version again when its definition is published unchanged (reformatted, reordered, as YAML); an older definition is a new version', async () => {
    expect((await publishV(admin, 'dedupe', quick(1))).version).toBe(1);
    const v2 = await publishV(admin, 'dedupe', quick(2));
    expect(v2.version).toBe(2);

    // The same definition with its keys in another order and as YAML: still version 2, with the
    // source text of version 2 as first published.
    const yaml = `edges: []\nnodes:\n  - spec: {code: "function handler(input) { return {version: 2}; }"}\n    runtime: js\n    type: CODE\n    node_id: mark\n`;
    const again = await publishV(admin, 'dedupe', yaml);
    expect(again).toEqual(v2);
    expect((await publishV(admin, 'dedupe', JSON.stringify(quick(2), null, 4))).version).toBe(2);

    // A new name with the identical definition renames the workflow and returns version 2.
    expect((await publishV(admin, 'dedupe', quick(2), 'Dedupe demo')).version).toBe(2);
    const w = await workflow(admin, 'dedupe');
    expect(w).toMatchObject({ name: 'Dedupe demo', latestVersion: 2 });
    expect(w.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);

    // Only the latest version is compared: version 1's definition again is version 3.
    expect((await publishV(admin, 'dedupe', quick(1))).version).toBe(3);
  });

  it('creates one version for identical publishes racing each other', async () => {
    const first = await Promise.all(Array.from({ length: 6 }, () => publishV(admin, 'racy', quick(1))));
    expect(new Set(first.map((v) => v.version))).toEqual(new Set([1]));
    const second = await Promise.all(Array.from({ length: 6 }, () => publishV(admin, 'racy', quick(2))));
    expect(new Set(second.map((v) => v.version))).toEqual(new Set([2]));
    expect((await workflow(admin, 'racy')).versions).toHaveLength(2);
  });

  it('starts runs on the default version: the latest until one is pinned, the pinned one after', async () => {
    await publishV(admin, 'pinning', quick(1));
    await publishV(admin, 'pinning', quick(2));
    expect(await workflow(admin, 'pinning')).toMatchObject({ latestVersion: 2, defaultVersion: 2, pinnedVersion: null });
    expect((await startRun(admin, 'pinning')).version).toBe(2);

    expect(await setDefault(admin, 'pinning', 1)).toMatchObject({ latestVersion: 2, defaultVersion: 1, pinnedVersion: 1 });
    const pinned = await startRun(admin, 'pinning');
    expect(pinned.version).toBe(1);
    expect(task(await waitRun(admin, pinned.id), 'mark').output).toEqual({ version: 1 });

    // A new version does not move a pinned default; an explicit version still wins.
    await publishV(admin, 'pinning', quick(3));
    expect(await workflow(admin, 'pinning')).toMatchObject({ latestVersion: 3, defaultVersion: 1, pinnedVersion: 1 });
    expect((await startRun(admin, 'pinning')).version).toBe(1);
    expect((await startRun(admin, 'pinning', { version: 3 })).version).toBe(3);

    // Unpinned (version null), the default follows the latest again.
    expect(await setDefault(admin, 'pinning', null)).toMatchObject({ defaultVersion: 3, pinnedVersion: null });
    expect((await startRun(admin, 'pinning')).version).toBe(3);
  });

  it('refuses new runs on a deprecated version with a clear error while a run already on it finishes; restoring allows them again', async () => {
    await publishV(admin, 'gated', gated(1));
    await publishV(admin, 'gated', gated(2));
    await setDefault(admin, 'gated', 1);
    const running = await startRun(admin, 'gated');
    expect(running.version).toBe(1);
    await waitRun(admin, running.id, (r) => task(r, 'gate')?.status === 'WAITING');

    const deprecated = await deprecate(admin, 'gated', 1);
    expect(deprecated).toMatchObject({ workflowId: 'gated', version: 1, deprecated: true, deprecatedAt: expect.any(String) });

    // Through the pinned default, and by its number.
    const viaDefault = await rejection(startRun(admin, 'gated'));
    expect(viaDefault.code).toBe('BAD_USER_INPUT');
    expect(viaDefault.message).toContain('workflow gated version 1 (its pinned default version) is deprecated: new runs on it are refused');
    expect(viaDefault.message).toContain('setDefaultVersion');
    expect(viaDefault.errors[0]!.extensions!.problems).toEqual([{ path: 'version', message: expect.stringContaining('deprecated') }]);
    const explicit = await rejection(startRun(admin, 'gated', { version: 1 }));
    expect(explicit.code).toBe('BAD_USER_INPUT');
    expect(explicit.message).toContain('workflow gated version 1 is deprecated');

    // The run that was already on version 1 goes on to the end on version 1.
    await signal(admin, running.id, 'go');
    const finished = await waitRun(admin, running.id);
    expect(finished).toMatchObject({ status: 'SUCCEEDED', version: 1 });
    expect(task(finished, 'mark').output).toEqual({ version: 1 });

    // A deprecated version cannot become the default; deprecating again keeps the first time.
    const pin = await rejection(setDefault(admin, 'gated', 1));
    expect(pin.code).toBe('BAD_USER_INPUT');
    expect(pin.message).toContain('workflow gated version 1 is deprecated and cannot be the default');
    expect((await deprecate(admin, 'gated', 1)).deprecatedAt).toBe(deprecated.deprecatedAt);
    const listed = await workflow(admin, 'gated');
    expect(listed.versions.map((v: { version: number; deprecated: boolean }) => [v.version, v.deprecated])).toEqual([
      [1, true],
      [2, false],
    ]);

    // Other versions still start.
    expect((await startRun(admin, 'gated', { version: 2 })).version).toBe(2);

    // Restored, the pinned default starts runs again.
    expect(await deprecate(admin, 'gated', 1, false)).toMatchObject({ version: 1, deprecated: false, deprecatedAt: null });
    expect((await startRun(admin, 'gated')).version).toBe(1);

    // A deprecated latest version, followed by the default: publish or pin another.
    await setDefault(admin, 'gated', null);
    await deprecate(admin, 'gated', 2);
    const latest = await rejection(startRun(admin, 'gated'));
    expect(latest.code).toBe('BAD_USER_INPUT');
    expect(latest.message).toContain('workflow gated version 2 (its latest version, the default) is deprecated');
    expect(latest.message).toContain('publish a new version');
    expect((await publishV(admin, 'gated', gated(3))).version).toBe(3);
    expect((await startRun(admin, 'gated')).version).toBe(3);
  });

  it('returns the run of a repeated idempotency key even after its version was deprecated; a new key is refused', async () => {
    await publishV(admin, 'idem', quick(1));
    const first = await startRun(admin, 'idem', { idempotencyKey: 'order-7' });
    await deprecate(admin, 'idem', 1);
    expect(await startRun(admin, 'idem', { idempotencyKey: 'order-7' })).toEqual(first);
    expect((await rejection(startRun(admin, 'idem', { idempotencyKey: 'order-8' }))).code).toBe('BAD_USER_INPUT');
  });

  it('retries a run on its own deprecated version, but not onto another deprecated version', async () => {
    await publishV(admin, 'retried', quick(1));
    await publishV(admin, 'retried', quick(2));
    const run = await startRun(admin, 'retried', { version: 1 });
    await waitRun(admin, run.id);
    await deprecate(admin, 'retried', 1);

    // Its own version, implicitly and by number: a retry is no new run.
    await retry(admin, run.id, 'mark');
    expect(await waitRun(admin, run.id)).toMatchObject({ status: 'SUCCEEDED', version: 1 });
    await retry(admin, run.id, 'mark', 1);
    expect(await waitRun(admin, run.id)).toMatchObject({ status: 'SUCCEEDED', version: 1 });

    await deprecate(admin, 'retried', 2);
    const moved = await rejection(retry(admin, run.id, 'mark', 2));
    expect(moved.code).toBe('BAD_USER_INPUT');
    expect(moved.message).toContain('workflow retried version 2 is deprecated: a retry may not move run');
    expect(await waitRun(admin, run.id)).toMatchObject({ status: 'SUCCEEDED', version: 1 });

    await deprecate(admin, 'retried', 2, false);
    await retry(admin, run.id, 'mark', 2);
    const onV2 = await waitRun(admin, run.id);
    expect(onV2).toMatchObject({ status: 'SUCCEEDED', version: 2 });
    expect(task(onV2, 'mark').output).toEqual({ version: 2 });
  });

  it('records the name of the API key that published each version', async () => {
    const created = (await admin.request(`mutation { createApiKey(input: {name: "ci-deployer", role: admin}) { secret } }`)).createApiKey;
    const ci = new Client(e2e.url, created.secret);
    try {
      expect((await publishV(admin, 'authored', quick(1))).createdBy).toBe('admin');
      expect((await publishV(ci, 'authored', quick(2))).createdBy).toBe('ci-deployer');
      // Publishing the latest definition again keeps its author.
      expect((await publishV(admin, 'authored', quick(2))).createdBy).toBe('ci-deployer');
      const w = await workflow(admin, 'authored');
      expect(w.versions.map((v: { createdBy: string }) => v.createdBy)).toEqual(['admin', 'ci-deployer']);
      expect((await admin.request(`{ workflowVersion(workflowId: "authored", version: 2) { createdBy } }`)).workflowVersion.createdBy).toBe('ci-deployer');
    } finally {
      await ci.close();
    }
  });

  it('lists every workflow with its default, pin and versions; a listed version loads its definition, source and mermaid when asked', async () => {
    await publishV(admin, 'listed-a', quick(1));
    await publishV(admin, 'listed-a', quick(2));
    await setDefault(admin, 'listed-a', 1);
    await publishV(admin, 'listed-b', quick(1));
    const r = await admin.request(`{ workflows { id defaultVersion pinnedVersion latestVersion versions { version deprecated source definition mermaid } } }`);
    const byId = Object.fromEntries(r.workflows.map((w: { id: string }) => [w.id, w]));
    expect(byId['listed-a']).toMatchObject({ defaultVersion: 1, pinnedVersion: 1, latestVersion: 2 });
    expect(byId['listed-b']).toMatchObject({ defaultVersion: 1, pinnedVersion: null, latestVersion: 1 });
    const v2 = byId['listed-a'].versions[1];
    expect(v2).toMatchObject({ version: 2, deprecated: false, definition: quick(2), source: JSON.stringify(quick(2)) });
    expect(v2.mermaid).toContain('mark');
  });

  it('answers NOT_FOUND for unknown workflows and versions, and for another tenant', async () => {
    await publishV(admin, 'mine', quick(1));
    for (const p of [
      workflow(admin, 'nope'),
      setDefault(admin, 'nope', 1),
      setDefault(admin, 'mine', 9),
      deprecate(admin, 'nope', 1),
      deprecate(admin, 'mine', 9),
      startRun(admin, 'mine', { version: 9 }),
    ]) {
      expect((await rejection(p)).code).toBe('NOT_FOUND');
    }
    const { client: other } = await e2e.tenant('someone else');
    for (const p of [
      workflow(other, 'mine'),
      setDefault(other, 'mine', 1),
      setDefault(other, 'mine', null),
      deprecate(other, 'mine', 1),
      startRun(other, 'mine'),
    ]) {
      expect((await rejection(p)).code).toBe('NOT_FOUND');
    }
    expect(await workflow(admin, 'mine')).toMatchObject({ pinnedVersion: null, versions: [{ version: 1, deprecated: false }] });
  });

  describe('the CLI', () => {
    /** Runs `weft <args>` in this process with WEFT_URL and WEFT_API_KEY; resolves its stdout. */
    function weft(...args: string[]): Promise<string> {
      return runWeft(e2e.url, apiKey, ...args);
    }

    it('shows versions with their marks, pins and unpins the default, deprecates and restores', async () => {
      await publishV(admin, 'cli-flow', quick(1));
      await publishV(admin, 'cli-flow', quick(2));
      expect(await weft('default-version', 'cli-flow')).toBe('workflow cli-flow: default version 2 (follows the latest)\n');
      expect(await weft('default-version', 'cli-flow', '1')).toBe('workflow cli-flow: default version 1 (pinned; latest 2)\n');
      expect(await weft('deprecate', 'cli-flow', '2')).toBe('workflow cli-flow version 2 deprecated: new runs on it are refused\n');

      const lines = (await weft('versions', 'cli-flow')).trimEnd().split('\n');
      expect(lines[0]).toBe('workflow cli-flow: default version 1 (pinned; latest 2)');
      expect(lines[1]).toMatch(/^VERSION\s+CREATED\s+CREATED BY$/);
      expect(lines[2]).toMatch(/^1\s+\d{4}-\d\d-\d\dT\S+\s+admin\s+default$/);
      expect(lines[3]).toMatch(/^2\s+\d{4}-\d\d-\d\dT\S+\s+admin\s+latest, deprecated$/);

      expect(await weft('deprecate', 'cli-flow', '2', '--restore')).toBe('workflow cli-flow version 2 restored: new runs may use it\n');
      expect(await weft('default-version', 'cli-flow', '--unpin')).toBe('workflow cli-flow: default version 2 (follows the latest)\n');
      await expect(weft('default-version', 'cli-flow', '1', '--unpin')).rejects.toThrow(/not both/);
      await expect(weft('deprecate', 'cli-flow', 'two')).rejects.toThrow(/positive integer/);
      await expect(weft('versions', 'nope')).rejects.toThrow(/NOT_FOUND/);
    });
  });
});
