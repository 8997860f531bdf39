/**
 * The schedules pages in a real Chromium, on a one-node workflow (a FORK, done at once): an
 * operator creates an every-N-seconds schedule from the page and sees it listed with its next
 * fire time, triggers it and follows the run's link to a run page that names the schedule,
 * pauses it with a note, edits and deletes it; a bad cron shows the API's words; a viewer is
 * offered no action; and a backfill's progress reaches its end on a phone-sized page that does
 * not scroll sideways.
 *
 * The selectors are the schedules pages' contract: `tr[data-schedule-id]` rows on /schedules
 * with `[data-testid="next-fire"]`; on /schedules/<id> `[data-testid="pause-note"]`,
 * `li[data-backfill-id][data-finished]`; the form "New schedule" (fields "Workflow",
 * "Interval (seconds)", "Cron expression", "Note (optional)"; the radios "By cron expression" and
 * "Every N seconds"; the button "Create schedule"); the buttons "Trigger now", "Pause schedule",
 * "Unpause schedule", "Start backfill", "Edit schedule" (form "Edit schedule", "Save changes"),
 * "Delete schedule" then "Confirm delete".
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import type { WeftClient } from '@weft/client';
import { publish, rejection, waitRun } from '../support/e2e-platform.js';
import { createKey, horizontalOverflow, signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

/** Every action an operator has on the schedules pages. */
const ACTIONS = ['New schedule', 'Trigger now', 'Pause schedule', 'Unpause schedule', 'Start backfill', 'Edit schedule', 'Delete schedule'];

const SCHEDULE_FIELDS = 'id nextFireAt paused pauseNote pausedBy firedCount';

describe('schedules pages in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let operator: string;

  /** Creates a schedule of `tick` through the API; returns its id. */
  const createSchedule = async (input: Record<string, unknown>): Promise<string> =>
    (await admin.request(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, { i: { workflowId: 'tick', ...input } })).createSchedule.id;
  const readSchedule = async (id: string) => (await admin.request(`query($id: ID!) { schedule(id: $id) { ${SCHEDULE_FIELDS} } }`, { id })).schedule;

  /** The form "New schedule" on /schedules, opened. */
  const openNewForm = async (page: Page) => {
    await page.getByRole('button', { name: 'New schedule' }).click();
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Workflow', { exact: true }).selectOption('tick');
    return form;
  };

  beforeAll(async () => {
    ({ client: admin } = await suite.e2e.tenant('browser-schedules'));
    await publish(admin, 'tick', { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] });
    operator = (await createKey(admin, 'browser-operator', 'operator')).secret;
  });

  suite.test('creates an interval schedule, triggers it, follows its run, pauses it with a note, edits and deletes it', async ({ page }) => {
    await signIn(page, operator, '/schedules');
    const form = await openNewForm(page);
    await form.getByRole('radio', { name: 'Every N seconds' }).check();
    await form.getByLabel('Interval (seconds)').fill('3600');
    await form.getByLabel('Note (optional)').fill('hourly from the browser');
    await form.getByRole('button', { name: 'Create schedule' }).click();

    const created = page.getByRole('status').filter({ hasText: 'Created schedule' });
    const id = ((await created.getByRole('link').textContent()) ?? '').trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await readSchedule(id);
    // Listed, with its next fire time (the instant the API holds).
    const row = page.locator(`tr[data-schedule-id="${id}"]`);
    await row.waitFor();
    expect(await row.locator('[data-testid="next-fire"] time').getAttribute('datetime')).toBe(stored.nextFireAt);
    await expect(row.textContent()).resolves.toContain('every 3600 s (1 h)');

    await row.getByRole('link', { name: id }).click();
    await page.getByRole('heading', { name: 'Upcoming fire times' }).waitFor();
    expect(await page.locator('table.upcoming tbody tr').count()).toBe(10);
    await page.getByRole('button', { name: 'Trigger now' }).click();
    const fired = page.getByRole('status').filter({ hasText: 'Triggered: started a run' });
    const runLink = fired.getByRole('link');
    const runId = ((await runLink.textContent()) ?? '').trim();
    await runLink.click();

    // The run's page names its schedule and nominal time.
    await page.waitForURL(`**/runs/${runId}`);
    const header = page.locator('.run-header');
    await header.getByRole('link', { name: id }).waitFor();
    expect(await header.getByRole('link', { name: id }).getAttribute('href')).toBe(`/schedules/${id}`);
    await header.getByText('Nominal time').waitFor();
    expect((await waitRun(admin, runId)).status).toBe('SUCCEEDED');

    // Back to the schedule by that link; the run is among its recent runs. Pause it with a note.
    await header.getByRole('link', { name: id }).click();
    await page.locator(`table.schedule-runs tr[data-run-id="${runId}"]`).waitFor();
    await page.getByLabel('Pause note (optional)').fill('upstream maintenance');
    await page.getByRole('button', { name: 'Pause schedule' }).click();
    await page.locator('[data-testid="pause-note"]').filter({ hasText: 'upstream maintenance' }).filter({ hasText: 'Paused by browser-operator' }).waitFor();
    await page.getByRole('button', { name: 'Unpause schedule' }).waitFor();
    expect(await readSchedule(id)).toMatchObject({ paused: true, pauseNote: 'upstream maintenance', pausedBy: 'browser-operator', firedCount: 1 });

    // Edit it (the form holds its fields), then delete it (asked first): the list says so.
    await page.getByRole('button', { name: 'Edit schedule' }).click();
    const edit = page.getByRole('form', { name: 'Edit schedule' });
    expect(await edit.getByLabel('Note (optional)').inputValue()).toBe('hourly from the browser');
    await edit.getByLabel('Interval (seconds)').fill('7200');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved the schedule.' }).waitFor();
    await page.locator('.schedule-facts').getByText('every 7200 s (2 h)').waitFor();
    await page.getByRole('button', { name: 'Delete schedule' }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deleted schedule ${id}` })
      .waitFor();
    expect(await page.locator(`tr[data-schedule-id="${id}"]`).count()).toBe(0);
  });

  suite.test("shows the API's words for a bad cron expression", async ({ page }) => {
    // The message of the API's error, as the console shows it (after its code, BAD_USER_INPUT).
    const refused = (await rejection(createSchedule({ cron: '61 * * * *' }))).errors[0]!;
    expect(refused.message).toMatch(/^cron: /);
    await signIn(page, operator, '/schedules');
    const form = await openNewForm(page);
    await form.getByRole('radio', { name: 'By cron expression' }).check();
    await form.getByLabel('Cron expression', { exact: true }).fill('61 * * * *');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await form
      .getByRole('alert')
      .filter({ hasText: `BAD_USER_INPUT: ${refused.message}` })
      .waitFor({ timeout: WAIT_MS });
    expect(await page.locator('tr[data-schedule-id]').filter({ hasText: '61 * * * *' }).count()).toBe(0);
  });

  suite.test('offers a viewer none of the actions', async ({ page }) => {
    const id = await createSchedule({ cron: '0 9 * * *', timeZone: 'Asia/Kolkata' });
    const viewer = await createKey(admin, 'browser-viewer', 'viewer');
    await signIn(page, viewer.secret, '/schedules');
    await page.locator(`tr[data-schedule-id="${id}"]`).waitFor();
    await page.goto(`/schedules/${id}`);
    await page.getByRole('heading', { name: 'Upcoming fire times' }).waitFor();
    // Shown in the schedule's zone: 09:00 in Kolkata.
    await page.locator('table.upcoming tbody tr').first().getByText('09:00:00 GMT+5:30').waitFor();
    for (const name of ACTIONS) expect({ name, count: await page.getByRole('button', { name }).count() }).toEqual({ name, count: 0 });
  });

  suite.test(
    'follows a backfill to its end on a phone-sized page without sideways scrolling',
    async ({ page }) => {
      const id = await createSchedule({ intervalSeconds: 60, overlapPolicy: 'ALLOW_ALL', startAt: new Date(Date.now() - 10 * 60_000).toISOString() });
      await signIn(page, operator, `/schedules/${id}`);
      await page.getByRole('heading', { name: 'Upcoming fire times' }).waitFor();
      const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
      const now = Date.now();
      await page.getByLabel('From', { exact: true }).fill(local(new Date(now - 5 * 60_000)));
      await page.getByLabel('To', { exact: true }).fill(local(new Date(now - 60_000)));
      await page.getByRole('button', { name: 'Start backfill' }).click();
      await page.getByRole('status').filter({ hasText: 'Backfill started' }).waitFor();
      const done = page.locator('li[data-backfill-id][data-finished="true"]');
      await done.waitFor({ timeout: WAIT_MS });
      const bar = done.getByRole('progressbar');
      const total = Number(await bar.getAttribute('aria-valuemax'));
      expect(total).toBeGreaterThanOrEqual(4);
      expect(await bar.getAttribute('aria-valuenow')).toBe(String(total));
      const overflow = await horizontalOverflow(page);
      expect(overflow.scrollWidth).toBeLessThanOrEqual(390);
    },
    { viewport: { width: 390, height: 844 } },
  );
});
