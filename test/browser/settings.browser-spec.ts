/**
 * The tenant settings page in a real Chromium: an admin saves a run retention and clears it, and
 * sees the API's refusal of a bad value under the field its path names; an operator is told the
 * page needs an admin key and is offered no link to it.
 *
 * The selectors are the page's contract: the nav link "Settings", the field "Retention days",
 * `[data-testid="retention-now"]`, the button "Save" and `[data-problems-for="retentionDays"] li`.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { createKey, nav, signIn } from './support/console.js';
import { browserSuite } from './support/harness.js';

describe('tenant settings in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-settings'));
  });

  suite.test('saves the retention on the settings page and shows the API’s refusal of a bad value at its path', async ({ page }) => {
    await signIn(page, adminKey, '/runs');
    await nav(page).getByRole('link', { name: 'Settings' }).click();
    const field = page.getByLabel('Retention days');
    await field.waitFor();
    expect(await field.inputValue()).toBe('');
    expect((await page.locator('[data-testid="retention-now"]').textContent())?.trim()).toBe('Runs are kept forever.');

    await field.fill('30');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await admin.request(`query { tenantSettings { retentionDays } }`)).tenantSettings).toEqual({ retentionDays: 30 });
    expect((await page.locator('[data-testid="retention-now"]').textContent())?.trim()).toBe('Runs are deleted 30 days after their top-level run ended.');

    await field.fill('5000');
    await page.getByRole('button', { name: 'Save' }).click();
    const problem = page.locator('[data-problems-for="retentionDays"] li');
    await problem.first().waitFor();
    expect(await problem.first().getAttribute('data-path')).toMatch(/^(input\.)?retentionDays$/);
    expect(await problem.first().textContent()).toContain('retentionDays must be an integer from 1 to 3650');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect((await admin.request(`query { tenantSettings { retentionDays } }`)).tenantSettings).toEqual({ retentionDays: 30 });

    await field.fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await admin.request(`query { tenantSettings { retentionDays } }`)).tenantSettings).toEqual({ retentionDays: null });
  });

  suite.test('tells an operator that the settings need an admin key, and offers no Settings link', async ({ page }) => {
    const operator = await createKey(admin, 'browser-operator', 'operator');
    await signIn(page, operator.secret, '/runs');
    // Inside the console, as a link would: the API serves index.html only for the routes it lists.
    await page.evaluate(() => {
      const w = globalThis as unknown as { history: { pushState(s: unknown, t: string, u: string): void }; dispatchEvent(e: unknown): void };
      w.history.pushState({}, '', '/settings');
      w.dispatchEvent(new (globalThis as unknown as { PopStateEvent: new (type: string) => unknown }).PopStateEvent('popstate'));
    });
    await page.getByText('needs an admin key').waitFor();
    expect(await page.getByLabel('Retention days').count()).toBe(0);
    expect(await nav(page).getByRole('link', { name: 'Settings' }).count()).toBe(0);
  });
});
