/**
 * Pausing and resuming runs in a real Chromium, on a run that waits for a signal: a pause from
 * the run's page with a reason, the signal delivered while paused and the next task held with
 * "run paused", the resume from the page and the run's end; the API's words when it refuses a
 * resume the page still offered; a run paused by a node out of attempts, cancelled from its page;
 * PAUSED on /runs, live and as a filter.
 *
 * The selectors are the run page's contract: `[data-testid="run-status"]`, `[data-testid="run-paused"]`
 * (the pause reason) and `[data-testid="run-paused-at"]`, task rows `tr[data-task-node]` with
 * `.task-wait[data-wait-reason]`, the field "Pause reason (optional)" and the buttons "Pause run",
 * "Resume run", "Cancel run", "Retry run", "Send signal"; on /runs `tr[data-run-id]` and "Status".
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import type { WeftClient } from '@weft/client';
import { getRun, jsNode, publish, rejection, start, task, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

const PAUSE_FIELDS = `id status pausedAt pauseReason tasks { nodeId status output waitReason waitDetail iteration }`;

/** How long a run started for the /runs page may take to show there before another is started. */
const FEED_PROBE_MS = 5_000;

/** The status shown at the top of a run's page. */
const runStatus = (page: Page) => page.locator('[data-testid="run-status"]');

/** Waits for the run page's status to read `status`. */
async function waitForRunStatus(page: Page, status: string): Promise<void> {
  await runStatus(page)
    .filter({ hasText: new RegExp(`^\\s*${status}\\s*$`) })
    .waitFor({ timeout: WAIT_MS });
}

/** Marks the page's document, so {@link assertNotReloaded} can tell that it was never reloaded. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => ((globalThis as unknown as { __weftMark: boolean }).__weftMark = true));
}

async function assertNotReloaded(page: Page): Promise<void> {
  expect(await page.evaluate(() => (globalThis as unknown as { __weftMark?: boolean }).__weftMark === true)).toBe(true);
}

/** The class list of the status badge inside `locator`'s first match. */
async function badgeClass(page: Page, selector: string): Promise<string> {
  return (await page.locator(`${selector} .status`).first().getAttribute('class')) ?? '';
}

describe('pausing runs in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  const pauseRun = (runId: string, reason: string) =>
    admin.request(`mutation($i: PauseRunInput!) { pauseRun(input: $i) { id status } }`, { i: { runId, reason } });
  const resumeRun = (runId: string) => admin.request(`mutation($i: ResumeRunInput!) { resumeRun(input: $i) { id status } }`, { i: { runId } });
  const cancelRun = (runId: string) => admin.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } });
  /** Starts a `gated` run and waits for its gate to wait for the signal `go`; returns the run id. */
  const startGated = async () => {
    const runId = await start(admin, 'gated');
    await waitRun(admin, runId, (r) => task(r, 'gate')?.status === 'WAITING', WAIT_MS);
    return runId;
  };

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-pause'));
    await publish(admin, 'gated', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }, jsNode('after', 'return {done: true};')],
      edges: [{ from: 'gate', to: 'after' }],
    });
    await publish(admin, 'declined', { nodes: [{ ...jsNode('charge', 'throw new Error("card declined");'), on_exhausted: 'pause' }], edges: [] });
  });

  suite.test('pauses a run from its page, holds its next task after the signal, and resumes it to its end', async ({ page }) => {
    const runId = await startGated();
    await signIn(page, adminKey, `/runs/${runId}`);
    await waitForRunStatus(page, 'RUNNING');
    await markDocument(page);
    const runningBadge = await badgeClass(page, '[data-testid="run-status"]');
    expect(await page.getByRole('button', { name: 'Resume run' }).count()).toBe(0);

    await page.getByLabel('Pause reason (optional)').fill('maintenance window');
    await page.getByRole('button', { name: 'Pause run' }).click();
    await waitForRunStatus(page, 'PAUSED');
    const paused = page.locator('[data-testid="run-paused"]');
    await paused.waitFor();
    expect((await paused.textContent())?.trim()).toMatch(/^Paused: maintenance window/);
    const api = await waitRun(admin, runId, (r) => r.status === 'PAUSED', WAIT_MS, PAUSE_FIELDS);
    expect(await page.locator('[data-testid="run-paused-at"] time').getAttribute('datetime')).toBe(api.pausedAt);
    // Its own look, not RUNNING's.
    const pausedBadge = await badgeClass(page, '[data-testid="run-status"]');
    expect({ running: runningBadge, paused: pausedBadge }).toEqual({ running: 'status status-running', paused: 'status status-paused' });
    const colours = await page.evaluate(() => {
      type El = { className: string; textContent: string };
      const g = globalThis as unknown as {
        document: { createElement(tag: string): El; body: { appendChild(e: El): void } };
        getComputedStyle(e: El): { backgroundColor: string };
      };
      return ['status status-running', 'status status-paused'].map((className) => {
        const el = g.document.createElement('span');
        el.className = className;
        el.textContent = 'x';
        g.document.body.appendChild(el);
        return g.getComputedStyle(el).backgroundColor;
      });
    });
    expect(colours[0]).not.toBe(colours[1]);

    // Paused: resume and cancel are offered, a pause and a retry are not.
    await page.getByRole('button', { name: 'Resume run' }).waitFor();
    await page.getByRole('button', { name: 'Cancel run' }).waitFor();
    expect(await page.getByRole('button', { name: 'Pause run' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Retry run' }).isDisabled()).toBe(true);
    await page.getByText('A paused run cannot be retried').waitFor();

    // The signal reaches the paused run; the task after it waits for the resume.
    expect(await page.getByLabel('Signal name').inputValue()).toBe('go');
    await page.getByRole('button', { name: 'Send signal' }).click();
    const held = page.locator('tr[data-task-node="after"] .task-wait[data-wait-reason="RUN_PAUSED"]');
    await held.waitFor({ timeout: WAIT_MS });
    expect((await held.textContent())?.replace(/\s+/g, ' ').trim()).toBe('run paused run paused: maintenance window');
    const holding = await getRun(admin, runId, PAUSE_FIELDS);
    expect({ status: holding.status, after: task(holding, 'after')?.status }).toEqual({ status: 'PAUSED', after: 'QUEUED' });

    await page.getByRole('button', { name: 'Resume run' }).click();
    await waitForRunStatus(page, 'SUCCEEDED');
    await page.locator('[data-node-id="after"][data-status="COMPLETED"]').waitFor({ timeout: WAIT_MS });
    expect(await page.locator('[data-testid="run-paused"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Resume run' }).count()).toBe(0);
    await assertNotReloaded(page);
    const done = await waitRun(admin, runId, undefined, WAIT_MS, PAUSE_FIELDS);
    expect({ status: done.status, pausedAt: done.pausedAt, output: task(done, 'after').output }).toEqual({
      status: 'SUCCEEDED',
      pausedAt: null,
      output: { done: true },
    });
  });

  suite.test('shows why a node that ran out of attempts paused its run, and cancels the paused run from its page', async ({ page }) => {
    const runId = await start(admin, 'declined');
    const paused = await waitRun(admin, runId, (r) => r.status === 'PAUSED', WAIT_MS, PAUSE_FIELDS);
    await signIn(page, adminKey, `/runs/${runId}`);
    await waitForRunStatus(page, 'PAUSED');
    const reason = page.locator('[data-testid="run-paused"]');
    await reason.waitFor();
    expect(paused.pauseReason).toMatch(/^node charge exhausted its 1 attempt: .*card declined/);
    expect((await reason.textContent())?.trim()).toContain(`Paused: ${paused.pauseReason}`);
    expect(await page.getByRole('button', { name: 'Retry run' }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Cancel run' }).click();
    await waitForRunStatus(page, 'CANCELLED');
    expect(await page.locator('[data-testid="run-paused"]').count()).toBe(0);
    for (const name of ['Resume run', 'Pause run', 'Cancel run'])
      expect({ name, count: await page.getByRole('button', { name }).count() }).toEqual({ name, count: 0 });
    expect((await getRun(admin, runId, PAUSE_FIELDS)).status).toBe('CANCELLED');
  });

  suite.test("shows the API's words when it refuses a resume the page still offered: the run was cancelled meanwhile", async ({ page }) => {
    const runId = await startGated();
    await pauseRun(runId, 'held for the refusal');
    // The page's live updates pass until `frozen`, then stop reaching it: it goes on showing PAUSED.
    let frozen = false;
    await page.routeWebSocket(
      (url) => url.pathname === '/graphql',
      (ws) => {
        const server = ws.connectToServer();
        ws.onMessage((m) => server.send(m));
        server.onMessage((m) => {
          if (!frozen) ws.send(m);
        });
      },
    );
    await signIn(page, adminKey, `/runs/${runId}`);
    await waitForRunStatus(page, 'PAUSED');
    await page.getByRole('button', { name: 'Resume run' }).waitFor();
    frozen = true;
    await cancelRun(runId);
    await waitRun(admin, runId, undefined, WAIT_MS);
    const refused = await rejection(resumeRun(runId));
    expect(refused.code).toBe('CONFLICT');

    await page.getByRole('button', { name: 'Resume run' }).click();
    await page.getByRole('alert').filter({ hasText: refused.message }).first().waitFor({ timeout: WAIT_MS });
    expect((await getRun(admin, runId, PAUSE_FIELDS)).status).toBe('CANCELLED');
  });

  suite.test('shows a run turning PAUSED on /runs live, and lists only paused runs under the PAUSED filter', async ({ page }) => {
    const running = await startGated();
    await signIn(page, adminKey, '/runs');
    await markDocument(page);
    await page.locator(`tr[data-run-id="${running}"]`).waitFor({ timeout: WAIT_MS });
    // A run started now shows up only through the live feed, which replays nothing to a late
    // subscriber: runs are started (and the unseen ones cancelled) until one is listed RUNNING.
    let toPause = '';
    for (let attempt = 1; !toPause; attempt++) {
      const runId = await startGated();
      try {
        await page.locator(`tr[data-run-id="${runId}"]`).filter({ hasText: 'RUNNING' }).waitFor({ timeout: FEED_PROBE_MS });
        toPause = runId;
      } catch (error) {
        await cancelRun(runId);
        if (attempt >= 10) throw error;
      }
    }

    await pauseRun(toPause, 'list check');
    await page.locator(`tr[data-run-id="${toPause}"]`).filter({ hasText: 'PAUSED' }).waitFor({ timeout: WAIT_MS });
    expect(await badgeClass(page, `tr[data-run-id="${toPause}"]`)).toBe('status status-paused');
    await assertNotReloaded(page);

    await page.getByLabel('Status').selectOption('PAUSED');
    await page.waitForURL(/status=PAUSED/);
    await page.locator(`tr[data-run-id="${running}"]`).waitFor({ state: 'detached', timeout: WAIT_MS });
    await page.locator(`tr[data-run-id="${toPause}"]`).waitFor({ timeout: WAIT_MS });
    const statuses = (await page.locator('tr[data-run-id] .status').allTextContents()).map((s) => s.trim());
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 'PAUSED')).toBe(true);

    await Promise.all([cancelRun(running), cancelRun(toPause)]);
  });

  suite.test('shows a run deadline, and the run TIMED_OUT with its own badge once it passed', async ({ page }) => {
    await publish(admin, 'timed', { timeout_seconds: 2, nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'never' } }], edges: [] });
    const runId = await start(admin, 'timed');
    const started = await getRun(admin, runId, 'id status deadlineAt');
    expect(started.deadlineAt).toEqual(expect.any(String));
    await signIn(page, adminKey, `/runs/${runId}`);
    // Before the deadline (2 s) the page may already show it; after it, the run's end.
    await waitForRunStatus(page, 'TIMED_OUT');
    expect(await page.locator('[data-testid="run-deadline"] time').getAttribute('datetime')).toBe(started.deadlineAt);
    expect(await badgeClass(page, '[data-testid="run-status"]')).toBe('status status-timed_out');
    const error = page.locator('.run-error');
    expect((await error.textContent())?.replace(/\s+/g, ' ').trim()).toBe('Timed out: run exceeded timeout_seconds 2');
    await page.locator('[data-node-id="gate"][data-status="CANCELLED"]').waitFor({ timeout: WAIT_MS });
  });
});
