/**
 * Starting runs, publishing versions and comparing them, in a real Chromium: a run started from
 * the console opens on its page; a JSON field that does not parse is named at its line and
 * column before anything is sent, and what the API refuses is shown at the field its path names;
 * a version published from YAML is listed; a YAML syntax error and an invalid definition are
 * listed by path under the editor; the diff of two versions shows the added line; an empty
 * tenant's Workflows page names `weft apply` and publishes the first workflow; keys that may not
 * start or publish are told so; the pages fit a phone's width.
 *
 * The selectors are these pages' contract: the fields by label ("Workflow", "Input (JSON)",
 * "Definition (YAML)", "Workflow id"), a field's problems in `[data-problems-for="<field>"]` with
 * one `li[data-path]` each, diff rows `tr[data-change="added|removed|same"]`.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import type { WeftClient } from '@weft/client';
import { publish, waitRun } from '../support/e2e-platform.js';
import { createKey, horizontalOverflow, signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

const RUN_WAIT_MS = 45_000;

/** Version 1 of `greeter`, as YAML. */
const GREETER_V1 = `nodes:
  - node_id: greet
    type: CODE
    runtime: js
    spec:
      code: |
        function handler(input) { return { greeting: "hello " + input.who }; }
      who: "{{input.who}}"
edges: []
`;

/** The problems listed under `field`. */
const problemsOf = (page: Page, field: string) => page.locator(`[data-problems-for="${field}"] li`);

/** Run in the page: whether the first textarea (the definition editor on the publish page) holds `text`. */
function textareaHolds(text: string): boolean {
  const area = (globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }).document.querySelector('textarea');
  return area?.value.includes(text) ?? false;
}

/** The focused element's caret offset (selectionStart), or null when it has none. */
async function caret(page: Page): Promise<number | null> {
  return page.evaluate(() => {
    const el = (globalThis as unknown as { document: { activeElement: { selectionStart?: number } | null } }).document.activeElement;
    return typeof el?.selectionStart === 'number' ? el.selectionStart : null;
  });
}

describe('starting runs and publishing versions in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  const runCount = async () => (await admin.request(`{ runs(first: 100) { edges { node { id } } } }`)).runs.edges.length as number;
  const latestVersion = async (workflowId: string) =>
    (await admin.request(`query($w: String!) { workflow(workflowId: $w) { latestVersion } }`, { w: workflowId })).workflow.latestVersion as number;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-publish'));
    await publish(admin, 'greeter', GREETER_V1);
  });

  suite.test('starts a run of a chosen workflow from the Runs page and opens it', async ({ page }) => {
    await signIn(page, adminKey, '/runs');
    await page.getByRole('link', { name: 'Start a run' }).click();
    await page.waitForURL(/\/runs\/start/);
    await page.getByLabel('Workflow', { exact: true }).selectOption('greeter');
    // The workflow's versions load into the version choice; the default (latest) is chosen.
    await page.getByLabel('Version', { exact: true }).locator('option', { hasText: 'v1 (latest)' }).waitFor({ state: 'attached' });
    expect(await page.getByLabel('Version', { exact: true }).inputValue()).toBe('');
    await page.getByLabel('Input (JSON)').fill('{\n  "who": "browser"\n}');
    await page.getByLabel('Idempotency key (optional)').fill('from-the-console');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/, { timeout: WAIT_MS });
    const runId = new URL(page.url()).pathname.split('/').pop()!;
    await page
      .locator('[data-testid="run-status"]')
      .filter({ hasText: /^\s*SUCCEEDED\s*$/ })
      .waitFor({ timeout: RUN_WAIT_MS });

    const run = await waitRun(admin, runId);
    expect(run.status).toBe('SUCCEEDED');
    const { run: started } = await admin.request(`query($id: ID!) { run(id: $id) { workflowId version input output } }`, { id: runId });
    expect(started).toMatchObject({ workflowId: 'greeter', version: 1, input: { who: 'browser' } });
    // The same idempotency key with the same start names the same run; with another input it is a conflict.
    const again = await admin.request(
      `mutation { startRun(input: { workflowId: "greeter", input: { who: "browser" }, idempotencyKey: "from-the-console" }) { id } }`,
    );
    expect(again.startRun.id).toBe(runId);
    const other = await admin
      .request(`mutation { startRun(input: { workflowId: "greeter", input: { who: "someone else" }, idempotencyKey: "from-the-console" }) { id } }`)
      .then(
        () => undefined,
        (err: unknown) => String(err),
      );
    expect(other).toContain(`CONFLICT: idempotency key "from-the-console" was used by run ${runId} with a different input`);
  });

  suite.test("names a JSON syntax error at its line and column, and the API's refusal at its path", async ({ page }) => {
    await signIn(page, adminKey, '/runs/start?workflowId=greeter');
    const input = page.getByLabel('Input (JSON)');
    const before = await runCount();

    // `"who": ,` lacks its value: line 2, column 10 is the comma; nothing is sent.
    await input.fill('{\n  "who": ,\n  "n": 1\n}');
    await page.getByRole('button', { name: 'Start run' }).click();
    await problemsOf(page, 'input').first().waitFor();
    expect(await problemsOf(page, 'input').allTextContents()).toEqual(['Input is not valid JSON: a value is expected at line 2, column 10']);
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect(await input.evaluate((el) => (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === el)).toBe(true);
    expect(await caret(page)).toBe('{\n  "who": '.length);
    expect(await page.getByRole('alert').count()).toBe(0);

    // An array is JSON but not an input.
    await input.fill('[1, 2]');
    await page.getByRole('button', { name: 'Start run' }).click();
    await problemsOf(page, 'input').filter({ hasText: 'Input must be a JSON object' }).waitFor();

    // Valid JSON the API refuses: a NUL character in order_id, named at its path under Input.
    await input.fill('{"order_id": "A\\u0000B"}');
    await page.getByRole('button', { name: 'Start run' }).click();
    const refused = problemsOf(page, 'input').filter({ hasText: 'NUL' });
    await refused.waitFor({ timeout: WAIT_MS });
    expect(await refused.getAttribute('data-path')).toMatch(/^input\.(\$\.)?order_id$/);
    expect(await input.evaluate((el) => (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === el)).toBe(true);
    expect(await page.getByRole('alert').textContent()).toMatch(/^BAD_USER_INPUT: /);
    expect(await problemsOf(page, 'config').count()).toBe(0);
    expect(new URL(page.url()).pathname).toBe('/runs/start');
    expect(await runCount()).toBe(before);
  });

  suite.test('publishes a new version from the YAML editor and lists it', async ({ page }) => {
    await publish(admin, 'editable', GREETER_V1);
    await signIn(page, adminKey, '/workflows/editable');
    await page.getByRole('link', { name: 'Publish a new version' }).click();
    await page.waitForURL(/\/workflows\/editable\/publish$/);
    const editor = page.getByLabel('Definition (YAML)');
    // The editor starts from the latest version's source as published.
    await page.waitForFunction(textareaHolds, 'node_id: greet');
    expect(await editor.inputValue()).toBe(GREETER_V1);

    await editor.fill(
      GREETER_V1.replace(
        'edges: []',
        '  - node_id: wave\n    type: CODE\n    runtime: js\n    spec: {code: "function handler() { return 1; }"}\nedges:\n  - {from: greet, to: wave}',
      ),
    );
    await page.getByRole('button', { name: 'Publish version' }).click();
    await page.waitForURL(/\/workflows\/editable\?version=2$/, { timeout: WAIT_MS });
    await page.getByRole('status').filter({ hasText: 'Published version 2.' }).waitFor();
    await page.getByRole('link', { name: 'v2', exact: true }).waitFor();
    await page.locator('[data-node-id="wave"]').waitFor();
    expect(await latestVersion('editable')).toBe(2);

    // The same definition again makes no version, and says so.
    await page.getByRole('link', { name: 'Publish a new version' }).click();
    await page.waitForFunction(textareaHolds, 'node_id: wave');
    await page.getByRole('button', { name: 'Publish version' }).click();
    await page.getByRole('status').filter({ hasText: "the same as version 2's: no new version was made" }).waitFor({ timeout: WAIT_MS });
    expect(await latestVersion('editable')).toBe(2);
  });

  suite.test('lists a YAML syntax error and an invalid definition by path under the editor', async ({ page }) => {
    await signIn(page, adminKey, '/workflows/greeter/publish');
    const editor = page.getByLabel('Definition (YAML)');
    await page.waitForFunction(textareaHolds, 'node_id: greet');

    // An unclosed flow sequence on line 3.
    await editor.fill('nodes:\n  - node_id: a\n    type: [CODE\n    runtime: js\n');
    await page.getByRole('button', { name: 'Publish version' }).click();
    const syntax = problemsOf(page, 'definition').first();
    await syntax.waitFor({ timeout: WAIT_MS });
    expect(await syntax.getAttribute('data-path')).toMatch(/^line \d+, column \d+$/);
    expect(await syntax.textContent()).toContain('YAML syntax error');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    // The caret goes to that place; the place is also a button that puts it back there.
    const [, line, column] = /^line (\d+), column (\d+)$/.exec((await syntax.getAttribute('data-path'))!)!;
    const text = await editor.inputValue();
    const lineStart =
      text
        .split('\n')
        .slice(0, Number(line) - 1)
        .join('\n').length + (Number(line) > 1 ? 1 : 0);
    const spot = Math.min(lineStart + Number(column) - 1, text.length);
    await page.waitForFunction(
      (at) => (globalThis as unknown as { document: { activeElement: { selectionStart?: number } | null } }).document.activeElement?.selectionStart === at,
      spot,
    );
    await editor.press('Control+Home');
    expect(await caret(page)).toBe(0);
    await syntax.getByRole('button').click();
    expect(await caret(page)).toBe(spot);

    // Valid YAML, but an edge to a node that does not exist.
    await editor.fill(GREETER_V1.replace('edges: []', 'edges:\n  - {from: greet, to: ghost}'));
    await page.getByRole('button', { name: 'Publish version' }).click();
    const edge = problemsOf(page, 'definition').filter({ hasText: 'ghost' });
    await edge.waitFor({ timeout: WAIT_MS });
    expect(await edge.getAttribute('data-path')).toBe('edges[0].to');
    expect(await edge.textContent()).toContain('node greet');
    // One line over the list says it was refused; no box under the button repeats the list.
    expect(await page.getByRole('alert').allTextContents()).toEqual([expect.stringMatching(/^Not published: \d+ problems? to fix\.$/)]);
    expect(await page.getByText('BAD_USER_INPUT').count()).toBe(0);
    expect(await latestVersion('greeter')).toBe(1);
  });

  suite.test('shows the line diff of two versions with the added line', async ({ page }) => {
    await publish(admin, 'diffed', GREETER_V1);
    await publish(admin, 'diffed', GREETER_V1.replace('edges: []', '      punctuation: "!"\nedges: []'));
    await signIn(page, adminKey, '/workflows/diffed');
    await page.getByRole('link', { name: 'Compare versions' }).click();
    await page.waitForURL(/\/workflows\/diffed\/diff\?from=1&to=2$/);
    const added = page.locator('tr[data-change="added"]');
    await added.first().waitFor({ timeout: WAIT_MS });
    expect(await added.locator('.diff-text').allTextContents()).toEqual(['      punctuation: "!"']);
    expect(await added.locator('.diff-num').allTextContents()).toEqual(['', '9']);
    expect(await page.locator('tr[data-change="removed"]').count()).toBe(0);
    await page.getByText('1 line added').waitFor();

    // The other way round the line is removed; compared as definitions, so is its JSON member.
    await page.getByLabel('From version').selectOption('2');
    await page.getByLabel('To version').selectOption('1');
    await page.locator('tr[data-change="removed"]').first().waitFor();
    expect(await page.locator('tr[data-change="added"]').count()).toBe(0);
    await page.getByLabel('Compare as').selectOption('definition');
    await page.waitForURL(/as=definition/);
    await page.locator('tr[data-change="removed"] .diff-text', { hasText: '"punctuation": "!"' }).waitFor();
  });

  suite.test("names `weft apply` on an empty tenant's Workflows page and publishes its first workflow", async ({ page }) => {
    const { apiKey } = await suite.e2e.tenant('browser-publish-empty');
    await signIn(page, apiKey, '/workflows');
    await page.getByText('This tenant has no workflows yet.').waitFor();
    expect(await page.locator('code', { hasText: 'weft apply -f <file>' }).count()).toBe(1);
    expect(await page.content()).not.toContain('weft publish');

    // An id the API refuses is named at the id field; the starter definition is valid as it is.
    await page.getByLabel('Workflow id').fill('no spaces');
    await page.getByRole('button', { name: 'Publish workflow' }).click();
    await problemsOf(page, 'workflowId').first().waitFor({ timeout: WAIT_MS });
    expect(await problemsOf(page, 'workflowId').first().getAttribute('data-path')).toBe('workflowId');

    await page.getByLabel('Workflow id').fill('first-flow');
    await page.getByLabel('Name (optional)').fill('The first flow');
    await page.getByRole('button', { name: 'Publish workflow' }).click();
    await page.waitForURL(/\/workflows\/first-flow\?version=1$/, { timeout: WAIT_MS });
    await page.getByRole('status').filter({ hasText: 'Published version 1.' }).waitFor();
    await page.getByText('The first flow').first().waitFor();
    await page.getByRole('link', { name: 'Workflows' }).first().click();
    await page.getByRole('link', { name: 'first-flow' }).waitFor();
  });

  suite.test('tells a viewer it may not start runs and an operator it may not publish', async ({ page, newPage }) => {
    const viewer = await createKey(admin, 'publish-viewer', 'viewer');
    await signIn(page, viewer.secret, '/runs/start?workflowId=greeter');
    await page.getByRole('note').filter({ hasText: 'Starting runs needs an operator or admin key' }).waitFor();
    expect(await page.getByRole('button', { name: 'Start run' }).count()).toBe(0);
    await page.goto('/workflows/greeter');
    await page.getByRole('link', { name: 'v1', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'Start a run' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Publish a new version' }).count()).toBe(0);

    const operator = await createKey(admin, 'publish-operator', 'operator');
    const second = await newPage();
    await signIn(second, operator.secret, '/workflows/greeter/publish');
    await second.getByRole('note').filter({ hasText: 'Publishing needs an admin key' }).waitFor();
    expect(await second.getByLabel('Definition (YAML)').count()).toBe(0);
    await second.goto('/workflows');
    await second.getByRole('link', { name: 'greeter' }).waitFor();
    expect(await second.getByRole('button', { name: 'New workflow' }).count()).toBe(0);
    await second.close();
  });

  suite.test(
    "fits a phone's width: the start, publish and compare pages",
    async ({ page }) => {
      await publish(admin, 'narrow', GREETER_V1);
      await publish(
        admin,
        'narrow',
        GREETER_V1.replace('edges: []', '      note: "a long line to make the diff wider than a phone, and then some more words on it"\nedges: []'),
      );
      await signIn(page, adminKey, '/runs/start?workflowId=narrow');
      const pages: [string, () => Promise<void>][] = [
        [
          '/runs/start?workflowId=narrow',
          () => page.getByLabel('Version', { exact: true }).locator('option', { hasText: 'v2 (latest)' }).waitFor({ state: 'attached' }),
        ],
        ['/workflows/narrow/publish', async () => void (await page.waitForFunction(textareaHolds, 'a long line'))],
        ['/workflows/narrow/diff?from=1&to=2', () => page.locator('tr[data-change="added"]').first().waitFor()],
        ['/workflows/narrow', () => page.getByRole('link', { name: 'Compare versions' }).waitFor()],
      ];
      for (const [path, ready] of pages) {
        await page.goto(path);
        await ready();
        const size = await horizontalOverflow(page);
        // The path in the comparison names the page that overflows.
        expect({ path, fits: size.scrollWidth <= 390 && size.bodyScrollWidth <= 390, ...size }).toEqual({ ...size, path, fits: true });
      }
    },
    { viewport: { width: 390, height: 800 } },
  );
});
