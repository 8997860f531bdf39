/**
 * Text a tenant's code or definitions hold, shown by the console as text, never as HTML: markup
 * a CODE step printed (log panel), markup in a definition (version diff), in a workflow's name
 * (workflows list) and in a definition the API refuses (the problems under the editor); and a
 * YAML "billion laughs" pasted in the publish form, refused by the API with the page still
 * working. A rendered payload would set `window.__owned` or add an `img` element.
 */
import { describe, expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import { jsNode, publish, start, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

const IMG = '<img src=x onerror="window.__owned=1">';
const SCRIPT = '<script>window.__owned=2</script>';

/** Whether a payload ran, and how many `img` elements the page holds (the console shows none). */
async function rendered(page: Page): Promise<{ owned: unknown; images: number }> {
  return page.evaluate(() => {
    const g = globalThis as unknown as { __owned?: unknown; document: { querySelectorAll(s: string): { length: number } } };
    return { owned: g.__owned ?? null, images: g.document.querySelectorAll('img').length };
  });
}

describe('hostile text in the console', () => {
  const suite = browserSuite();

  suite.test('shows markup a step printed, and markup in a definition and a name, as text', async ({ page }) => {
    const { client, apiKey } = await suite.e2e.tenant('browser-hostile');
    await publish(client, 'printer', { nodes: [jsNode('printer', `console.log(${JSON.stringify(IMG + SCRIPT)}); return 1;`)], edges: [] });
    const runId = await start(client, 'printer');
    expect((await waitRun(client, runId, undefined, 45_000)).status).toBe('SUCCEEDED');

    await signIn(page, apiKey, `/runs/${runId}`);
    const panel = page.locator('details[data-task-logs="printer"]');
    await panel.locator('summary').click();
    const text = panel.locator('[data-attempt="0"] pre.log-text');
    await text.filter({ hasText: 'onerror' }).waitFor({ timeout: WAIT_MS });
    expect(await text.textContent()).toBe(`${IMG}${SCRIPT}\n`);
    expect(await rendered(page)).toEqual({ owned: null, images: 0 });

    const v1 = `nodes:\n  - node_id: a\n    type: WAIT\n    spec: { duration_seconds: 1 }\nedges: []\n`;
    await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
      i: { workflowId: 'marked', name: `${IMG}${SCRIPT}`, definition: v1 },
    });
    await publish(client, 'marked', v1.replace('edges: []', `description: '${IMG}${SCRIPT}'\nedges: []`));
    await page.goto(new URL('/workflows/marked/diff?from=1&to=2', page.url()).href);
    const added = page.locator('tr[data-change="added"] .diff-text');
    await added.first().waitFor({ timeout: WAIT_MS });
    expect(await added.allTextContents()).toEqual([`description: '${IMG}${SCRIPT}'`]);
    expect(await rendered(page)).toEqual({ owned: null, images: 0 });

    await page.goto(new URL('/workflows', page.url()).href);
    await page.getByText(`${IMG}${SCRIPT}`).first().waitFor({ timeout: WAIT_MS });
    expect(await rendered(page)).toEqual({ owned: null, images: 0 });
  });

  suite.test('lists a refused definition holding markup as text, and refuses a YAML alias bomb with the page alive', async ({ page }) => {
    const { apiKey } = await suite.e2e.tenant('browser-bomb');
    // An empty tenant's Workflows page holds the form of its first workflow.
    await signIn(page, apiKey, '/workflows');
    const editor = page.getByLabel('Definition (YAML)');
    await editor.waitFor({ timeout: WAIT_MS });
    await page.getByLabel('Workflow id').fill('hostile');
    await editor.fill(`nodes:\n  - node_id: "${IMG.replace(/"/g, '\\"')}"\n    type: "${SCRIPT}"\nedges: []\n`);
    await page.getByRole('button', { name: 'Publish workflow' }).click();
    const problems = page.locator('[data-problems-for] li');
    await problems.first().waitFor({ timeout: WAIT_MS });
    expect((await problems.allTextContents()).join('\n')).toContain(SCRIPT);
    expect(await rendered(page)).toEqual({ owned: null, images: 0 });

    // Nine levels of nine aliases: 9^9 (387,420,489) strings if expanded.
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    await editor.fill(`${levels.join('\n')}\nnodes: *i\nedges: []\n`);
    await page.getByRole('button', { name: 'Publish workflow' }).click();
    await page.locator('[data-problems-for] li', { hasText: /alias/i }).first().waitFor({ timeout: WAIT_MS });
    // The page still answers.
    expect(await page.evaluate(() => 1 + 1)).toBe(2);
  });
});
