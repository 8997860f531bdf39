/**
 * What the browser suites do in the console: sign in, find the navigation, make keys through the
 * API. The selectors are the console's accessible names (labels, roles, link text).
 */
import type { Page } from 'playwright-core';
import type { WeftClient } from '@weft/client';
import type { E2E } from '../../support/e2e-platform.js';

export type Role = 'admin' | 'operator' | 'viewer';

/** The main navigation of the signed-in shell. */
export function nav(page: Page) {
  return page.getByRole('navigation', { name: 'Main' });
}

/** The sign-in form's key field. */
export function keyField(page: Page) {
  return page.getByLabel('API key');
}

/** Opens `path` (default `/`) and waits for the sign-in form. */
export async function openSignIn(page: Page, path = '/'): Promise<void> {
  await page.goto(path);
  await keyField(page).waitFor();
}

/** Types `key` into the sign-in form and submits it (no wait for the outcome). */
export async function submitKey(page: Page, key: string): Promise<void> {
  await keyField(page).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Signs in at `path` (default `/`) with `key` and waits for the shell's navigation. */
export async function signIn(page: Page, key: string, path = '/'): Promise<void> {
  await openSignIn(page, path);
  await submitKey(page, key);
  await nav(page).waitFor();
}

/** The link texts of the main navigation, in order. */
export async function navLinks(page: Page): Promise<string[]> {
  return (await nav(page).getByRole('link').allTextContents()).map((t) => t.trim());
}

/** Creates an API key of `role` through the API with the `admin` client; returns its id and secret. */
export async function createKey(admin: WeftClient, name: string, role: Role): Promise<{ id: string; secret: string }> {
  const r = await admin.request(`mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id secret } }`, { i: { name, role } });
  return r.createApiKey as { id: string; secret: string };
}

/** Revokes the key `id` through the API. */
export async function revokeKey(admin: WeftClient, id: string): Promise<void> {
  await admin.request(`mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`, { id });
}

/** What the API answers a POST with `key`: the HTTP status and the first error's message, if any. */
export async function apiAnswer(e2e: E2E, key: string, query: string): Promise<{ status: number; message?: string }> {
  const res = await fetch(e2e.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { errors?: { message: string }[] };
  return { status: res.status, message: body.errors?.[0]?.message };
}

/** The page's horizontal overflow: how much wider than the viewport the document is laid out. */
export async function horizontalOverflow(page: Page): Promise<{ scrollWidth: number; bodyScrollWidth: number; viewport: number }> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number }; body: { scrollWidth: number } } })
      .document;
    return { scrollWidth: doc.documentElement.scrollWidth, bodyScrollWidth: doc.body.scrollWidth, viewport: doc.documentElement.clientWidth };
  });
}

/** The key the console keeps for this tab (sessionStorage `weft.console.apiKey`), or null. */
export async function storedKey(page: Page): Promise<string | null> {
  return page.evaluate(() =>
    (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('weft.console.apiKey'),
  );
}
