/**
 * The run page's log panels in a real Chromium: one closed panel per worker task, which reads its
 * task's attempts when opened: a CODE node's kept tail after the cut marker, monospace and
 * scrollable, and a task reached later (after a signal) getting its panel live.
 *
 * Selectors: `details[data-task-logs="<node>"]` per task, `[data-attempt]` per attempt, the
 * marker in `.log-cut`, the text in `pre.log-text`.
 */
import { describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, task, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

describe('run logs in the browser', () => {
  const suite = browserSuite();

  suite.test("shows each attempt's logs in a panel per task, the cut marker first, and a later task's once it ends", async ({ page }) => {
    const { client, apiKey }: { client: WeftClient; apiKey: string } = await suite.e2e.tenant('browser-logs');
    // noisy prints 1 MiB (65,536 lines of 16 bytes): its last 64 KiB are kept after the marker.
    await publish(client, 'noisy', {
      nodes: [
        jsNode('noisy', 'for (let i = 0; i < 65536; i++) console.log("line " + String(i).padStart(10, "0")); return {ok: 1};'),
        { node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } },
        jsNode('after', 'console.log("after done"); return 2;'),
      ],
      edges: [
        { from: 'noisy', to: 'gate' },
        { from: 'gate', to: 'after' },
      ],
    });
    const runId = await start(client, 'noisy');
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING', 45_000);

    await signIn(page, apiKey, `/runs/${runId}`);
    const noisy = page.locator('details[data-task-logs="noisy"]');
    await noisy.locator('summary').click();
    const attempt = noisy.locator('[data-attempt="0"]');
    await attempt.locator('.log-cut').filter({ hasText: '… 983,040 bytes cut …' }).waitFor({ timeout: WAIT_MS });
    const text = attempt.locator('pre.log-text');
    expect(await text.textContent()).toMatch(/^… 983,040 bytes cut …\nline 0000061440\n[\s\S]*\nline 0000065535\n$/);
    const look = await text.evaluate((el) => {
      // Runs in the page: the suites are type-checked without the DOM's types.
      const e = el as unknown as { scrollHeight: number; clientHeight: number };
      const style = (globalThis as unknown as { getComputedStyle(e: unknown): { fontFamily: string; overflowY: string } }).getComputedStyle(el);
      return { scrolls: e.scrollHeight > e.clientHeight, font: style.fontFamily, overflow: style.overflowY };
    });
    expect(look.scrolls).toBe(true);
    expect(look.overflow).toBe('auto');
    expect(look.font).toMatch(/monospace/);
    // The gate is no worker node: no panel.
    expect(await page.locator('details[data-task-logs="gate"]').count()).toBe(0);

    await client.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name: 'go' } });
    const after = page.locator('details[data-task-logs="after"]');
    await after.waitFor({ timeout: 45_000 });
    await after.locator('summary').click();
    await after.locator('[data-attempt="0"] pre.log-text').filter({ hasText: 'after done' }).waitFor({ timeout: 45_000 });
    expect(await after.locator('[data-attempt="0"] pre.log-text').textContent()).toBe('after done\n');
  });
});
