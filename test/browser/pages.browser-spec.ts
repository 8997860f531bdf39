/**
 * The console's other pages in a real Chromium: a workflow's versions with their diagrams and
 * the admin's version actions, keys (the secret shown once, revoke), queues and workers, and on
 * a run's page the cancel action, a fan-out's iteration counts, a SUBWORKFLOW node's link to its
 * child run and the history timeline. Each action is checked against the API afterwards.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import { WeftClient } from '@weft/client';
import { jsNode, publish, start, task, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

const RUN_WAIT_MS = WAIT_MS;

async function waitForRunStatus(page: Page, status: string): Promise<void> {
  await page
    .locator('[data-testid="run-status"]')
    .filter({ hasText: new RegExp(`^\\s*${status}\\s*$`) })
    .waitFor({ timeout: RUN_WAIT_MS });
}

describe('workflows, keys, queues and run details in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-pages'));
    await publish(admin, 'two-step', { nodes: [jsNode('first', 'return 1;'), jsNode('second', 'return 2;')], edges: [{ from: 'first', to: 'second' }] });
    await publish(admin, 'two-step', { nodes: [jsNode('first', 'return 1;'), jsNode('then', 'return 3;')], edges: [{ from: 'first', to: 'then' }] });
  });

  suite.test("shows a workflow's versions with their diagrams, and pins, deprecates and restores one", async ({ page }) => {
    await signIn(page, adminKey, '/workflows');
    await page.getByRole('link', { name: 'two-step' }).first().click();
    await page.waitForURL(/\/workflows\/two-step/);
    // The default (latest) version's diagram, then version 1's.
    await page.locator('[data-node-id="then"]').waitFor({ timeout: WAIT_MS });
    // On the default that follows latest, setting it as default would pin it: the button says so.
    await page.getByRole('button', { name: 'Pin as default' }).waitFor({ timeout: WAIT_MS });
    expect(await page.getByRole('button', { name: 'Set as default' }).count()).toBe(0);
    await page.goto('/workflows/two-step?version=1');
    await page.locator('[data-node-id="second"]').waitFor({ timeout: WAIT_MS });
    expect(await page.locator('[data-node-id="then"]').count()).toBe(0);
    await page.getByText('return 2;').first().waitFor();
    expect(await page.getByRole('link', { name: 'Runs of this version' }).getAttribute('href')).toBe('/runs?workflowId=two-step&version=1');

    await page.getByRole('button', { name: 'Set as default' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /default/i })
      .first()
      .waitFor({ timeout: WAIT_MS });
    const pinned = await admin.request(`{ workflow(workflowId: "two-step") { pinnedVersion defaultVersion } }`);
    expect(pinned.workflow).toEqual({ pinnedVersion: 1, defaultVersion: 1 });
    // The pinned default offers no way to become what it is.
    await page.getByRole('button', { name: 'Follow latest' }).waitFor({ timeout: WAIT_MS });
    expect(await page.getByRole('button', { name: /as default/ }).count()).toBe(0);

    await page.goto('/workflows/two-step?version=2');
    await page.getByRole('button', { name: 'Deprecate' }).click();
    await page.getByRole('button', { name: 'Restore' }).waitFor({ timeout: WAIT_MS });
    const deprecated = async () => (await admin.request(`{ workflowVersion(workflowId: "two-step", version: 2) { deprecated } }`)).workflowVersion.deprecated;
    expect(await deprecated()).toBe(true);
    await page.getByRole('button', { name: 'Restore' }).click();
    await page.getByRole('button', { name: 'Deprecate' }).waitFor({ timeout: WAIT_MS });
    expect(await deprecated()).toBe(false);
  });

  suite.test('lists the nodes of a DAG too big to draw instead of laying it out', async ({ page }) => {
    // One entry fanning out to 400 nodes: above the console's 300-node drawing limit.
    const ids = Array.from({ length: 401 }, (_, i) => `n${i}`);
    await publish(admin, 'huge', { nodes: ids.map((id) => jsNode(id, 'return 1;')), edges: ids.slice(1).map((to) => ({ from: 'n0', to })) });
    await signIn(page, adminKey, '/workflows/huge');
    await page.getByText('This DAG has 401 nodes: too many to draw here.').waitFor({ timeout: WAIT_MS });
    expect(await page.locator('li[data-node-id]').count()).toBe(401);
    expect(await page.locator('li[data-node-id="n400"]').getAttribute('data-status')).toBe('UNREACHED');
    expect(await page.locator('.dag-svg').count()).toBe(0);
  });

  suite.test('creates a key whose secret is shown once and works, then revokes it', async ({ page }) => {
    await signIn(page, adminKey, '/keys');
    await page.getByLabel('Name').fill('browser-made');
    await page.getByLabel('Role').selectOption('operator');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.getByLabel('The new API key');
    await secretField.waitFor({ timeout: WAIT_MS });
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^weft_/);
    // A second key would replace the panel and lose this secret: not while the panel is open.
    const createButton = page.getByRole('button', { name: 'Create key' });
    expect(await createButton.isDisabled()).toBe(true);
    await page.getByText('Copy the key shown, then press Done').waitFor({ timeout: WAIT_MS });
    const made = new WeftClient(suite.e2e.url, secret);
    try {
      expect((await made.request(`{ whoami { keyName role } }`)).whoami).toEqual({ keyName: 'browser-made', role: 'operator' });
      await page.getByRole('button', { name: 'Done' }).click();
      expect(await page.getByLabel('The new API key').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      expect(await createButton.isDisabled()).toBe(false);

      const row = page.locator('tr', { hasText: 'browser-made' });
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Confirm revoke' }).click();
      await row.getByText('active').waitFor({ state: 'detached', timeout: WAIT_MS });
      const keys = (await admin.request(`{ apiKeys { name revokedAt } }`)).apiKeys;
      expect(keys.find((k: any) => k.name === 'browser-made').revokedAt).not.toBeNull();
      await expect(made.request(`{ whoami { role } }`)).rejects.toThrow();
    } finally {
      await made.close();
    }
  });

  suite.test("lists a queue's backlog and the live workers", async ({ page }) => {
    await publish(admin, 'parked', { nodes: [{ ...jsNode('wait', 'return 1;'), queue: 'browser-parked' }], edges: [] });
    await start(admin, 'parked');
    await signIn(page, adminKey, '/queues');
    const row = page.locator('tr', { hasText: 'browser-parked' });
    await row.waitFor({ timeout: WAIT_MS });
    // name, …, backlog 1: nothing serves this queue.
    expect(await row.textContent()).toMatch(/1/);
    const workers = (await admin.request(`{ workers { id } }`)).workers;
    expect(workers.length).toBeGreaterThan(0);
    await page.getByText(workers[0].id.slice(0, 8)).first().waitFor({ timeout: WAIT_MS });
    // Hosts and pids are the operator's: no column for them, even for an admin key.
    expect(await page.getByRole('columnheader', { name: /host/i }).count()).toBe(0);
  });

  suite.test('cancels a waiting run from its page', async ({ page }) => {
    await publish(admin, 'gate', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } }], edges: [] });
    const runId = await start(admin, 'gate');
    await waitRun(admin, runId, (r) => task(r, 'gate')?.status === 'WAITING', RUN_WAIT_MS);
    await signIn(page, adminKey, `/runs/${runId}`);
    await page.locator('[data-node-id="gate"][data-status="WAITING"]').waitFor({ timeout: WAIT_MS });
    await page.getByLabel('Reason (optional)', { exact: true }).fill('closed from the browser');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await waitForRunStatus(page, 'CANCELLED');
    const run = await waitRun(admin, runId);
    expect(run.status).toBe('CANCELLED');
    expect(run.error).toContain('closed from the browser');
  });

  suite.test("draws a fan-out's iterations and links a SUBWORKFLOW node to its child run, with the history", async ({ page }) => {
    await publish(admin, 'child', { nodes: [jsNode('inner', 'return { got: input.n };', { n: '{{input.n}}' })], edges: [] });
    await publish(admin, 'parent', {
      nodes: [
        { ...jsNode('each', 'return { item: input.item };', { item: '{{item}}' }), for_each: '{{input.items}}', as: 'item' },
        { node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: 'child', input: { n: 7 } } },
      ],
      edges: [{ from: 'each', to: 'call' }],
    });
    const runId = await start(admin, 'parent', { items: [1, 2, 3] });
    expect((await waitRun(admin, runId, undefined, RUN_WAIT_MS)).status).toBe('SUCCEEDED');
    const { run } = await admin.request(`query($id: ID!) { run(id: $id) { children { id status } } }`, { id: runId });
    const child = run.children[0];

    await signIn(page, adminKey, `/runs/${runId}`);
    await waitForRunStatus(page, 'SUCCEEDED');
    const each = page.locator('[data-node-id="each"]');
    await each.waitFor();
    expect(await each.getAttribute('aria-label')).toMatch(/×3: 3 completed/);
    // The history: the run's first and last events.
    await page.locator('[data-event-type="RunStarted"]').waitFor();
    expect(await page.locator('[data-event-type]').count()).toBeGreaterThan(2);

    // At 1280 px the tasks table fits: its Output column is in view and the page does not scroll
    // sideways. A CODE node's input does not start with its program; the program opens apart.
    const viewport = page.viewportSize()!;
    expect(viewport.width).toBe(1280);
    const output = await page.locator('.task-table').getByRole('columnheader', { name: 'Output' }).boundingBox();
    expect(output!.x + output!.width).toBeLessThanOrEqual(viewport.width);
    expect(
      await page.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement.scrollWidth,
      ),
    ).toBeLessThanOrEqual(viewport.width);
    const eachInput = page.locator('tr[data-task-node="each"][data-task-iteration="0"] td.task-json').first();
    expect(await eachInput.locator('.json-inline').textContent()).toBe('{"item":1}');
    const program = eachInput.locator('details.code-details');
    await program.locator('summary').click();
    expect(await program.locator('pre').textContent()).toContain('function handler(input)');

    await page.getByRole('link', { name: new RegExp(`Child run ${child.id}`) }).click();
    await page.waitForURL(new RegExp(`/runs/${child.id}`));
    await waitForRunStatus(page, 'SUCCEEDED');
    await page.locator('[data-node-id="inner"][data-status="COMPLETED"]').waitFor();
  });
});
