/**
 * The GraphQL IDE page (GET /graphql in a browser): bundled GraphiQL with its monaco editor and
 * workers, under the console's Content-Security-Policy, reaching nothing but this server.
 */
import { describe, expect } from '@jest/globals';
import type { Page, Request } from 'playwright-core';
import { nav, signIn, storedKey } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

/** GraphiQL's result pane (a read-only monaco editor). */
const result = (page: Page) => page.locator('.graphiql-response');

/**
 * Opens GraphiQL's docs explorer and waits for the schema's root types: the introspection
 * succeeded with the key, and the editors are up.
 */
async function waitForSchema(page: Page): Promise<void> {
  await page.locator('.graphiql-container').waitFor();
  const docs = page.locator('.graphiql-doc-explorer');
  if (!(await docs.isVisible())) await page.getByRole('button', { name: /Documentation Explorer/ }).click();
  await docs.getByText('Query', { exact: true }).first().waitFor({ timeout: WAIT_MS });
}

/**
 * Runs the operation in GraphiQL's editor (its run button) and waits for the result pane to hold
 * `text`. A click GraphiQL takes while it still renders (a loaded machine) runs nothing: the button
 * is clicked again until the operation's request goes out, never once it did (the button then
 * stops the request).
 */
async function runAndWaitFor(page: Page, text: RegExp): Promise<string> {
  let sent = false;
  const onRequest = (request: Request): void => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/graphql' && !(request.postData() ?? '').includes('IntrospectionQuery'))
      sent = true;
  };
  page.on('request', onRequest);
  try {
    for (const deadline = Date.now() + WAIT_MS; !sent;) {
      if (Date.now() > deadline) throw new Error('GraphiQL sent no operation when its run button was clicked');
      await page.locator('.graphiql-execute-button').click();
      for (const retry = Date.now() + 3_000; !sent && Date.now() < retry;) await page.waitForTimeout(50);
    }
  } finally {
    page.off('request', onRequest);
  }
  await result(page).getByText(text).first().waitFor({ timeout: WAIT_MS });
  return (await result(page).innerText()).replace(/\s+/g, ' ');
}

/** This page's storage, as plain data: every sessionStorage item, and the localStorage keys GraphiQL uses. */
async function storage(page: Page): Promise<{ session: Record<string, string>; graphiqlLocal: string[] }> {
  return page.evaluate(() => {
    type Store = { length: number; key(i: number): string | null; getItem(k: string): string | null };
    const g = globalThis as unknown as { sessionStorage: Store; localStorage: Store };
    const keys = (s: Store) => Array.from({ length: s.length }, (_, i) => s.key(i)!);
    return {
      session: Object.fromEntries(keys(g.sessionStorage).map((k) => [k, g.sessionStorage.getItem(k)!])),
      graphiqlLocal: keys(g.localStorage).filter((k) => k.startsWith('graphiql:')),
    };
  });
}

/** Puts `value` under `key` in localStorage, as GraphiQL's default storage would have. */
async function leaveInLocalStorage(page: Page, key: string, value: string): Promise<void> {
  await page.evaluate(
    ([k, v]) => (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem(k!, v!),
    [key, value],
  );
}

describe('GraphQL IDE in the browser', () => {
  const suite = browserSuite();

  suite.test('loads the schema with the key typed in, and runs a query with it', async ({ page }) => {
    const { apiKey } = await suite.e2e.tenant('ide-typed');
    const workers: string[] = [];
    page.on('worker', (w) => workers.push(w.url()));
    const answer = await page.goto('/graphql');
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(await page.title()).toBe('Weft GraphQL IDE');
    expect(await page.getByRole('link', { name: 'Weft console' }).getAttribute('href')).toBe('/');

    const field = page.getByLabel('API key');
    expect(await field.getAttribute('type')).toBe('password');
    await field.fill(apiKey);
    await page.getByRole('button', { name: 'Use key' }).click();

    // The docs explorer lists the root types only once introspection succeeded with the key.
    await waitForSchema(page);
    expect(await page.locator('.graphiql-doc-explorer').getByText('Mutation', { exact: true }).count()).toBeGreaterThan(0);

    // The default operation is `whoami`: its answer names the key's role.
    const text = await runAndWaitFor(page, /"admin"/);
    expect(text).toContain('"role": "admin"');
    // The key is kept where the console keeps it, for this tab only.
    expect(await storedKey(page)).toBe(apiKey);
    // …and nowhere in the page: the field is emptied, its placeholder names the key's start only.
    expect(await field.inputValue()).toBe('');
    expect(await field.getAttribute('placeholder')).toBe(`key in use: ${apiKey.slice(0, 9)}…`);
    expect(await page.content()).not.toContain(apiKey);

    // Autocompletion comes from monaco's GraphQL worker (a same-origin module worker) and the schema.
    await page.locator('.graphiql-query-editor .monaco-editor').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\nquery Who { who');
    await page.keyboard.press('Control+Space');
    await page.locator('.suggest-widget').getByText('whoami').first().waitFor({ timeout: WAIT_MS });
    expect(workers.length).toBeGreaterThan(0);
    expect(workers.every((url) => url.startsWith(`${suite.origin}/assets/`))).toBe(true);
  });

  suite.test('keeps typed queries and variables in this tab only, and forgets them with the key', async ({ page }) => {
    const { apiKey } = await suite.e2e.tenant('ide-storage');
    await page.goto('/graphql');
    // What an IDE that kept its editors in localStorage would have left behind.
    await leaveInLocalStorage(page, 'graphiql:variables', '{"payload": "left behind"}');
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Use key' }).click();
    await waitForSchema(page);

    await page.locator('.graphiql-query-editor .monaco-editor').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\nquery Secret($card: String) { whoami { role } }');
    await page.locator('button[data-name="variables"]').click();
    await page.locator('.graphiql-editor-tool .monaco-editor').first().click();
    await page.keyboard.type('{"card": "4111-secret"');

    // GraphiQL saves its editors as they change: into this tab's sessionStorage, not localStorage.
    const saved = async () => Object.values((await storage(page)).session).join('\n');
    for (let i = 0; !/query Secret/.test(await saved()) || !/4111-secret/.test(await saved()); i++) {
      if (i > WAIT_MS / 50)
        throw new Error(`GraphiQL did not save the editors in sessionStorage (it holds ${Object.keys((await storage(page)).session).join(', ')})`);
      await page.waitForTimeout(50);
    }
    expect((await storage(page)).graphiqlLocal).toEqual(['graphiql:variables']);

    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByText('GraphiQL opens once a key is in use').waitFor();
    expect(await storage(page)).toEqual({ session: {}, graphiqlLocal: [] });
  });

  suite.test('signing out of the console forgets what GraphiQL kept', async ({ page }) => {
    const { apiKey } = await suite.e2e.tenant('ide-sign-out');
    await signIn(page, apiKey);
    await leaveInLocalStorage(page, 'graphiql:query', 'query Left { whoami { role } }');
    await page.evaluate(() =>
      (globalThis as unknown as { sessionStorage: { setItem(k: string, v: string): void } }).sessionStorage.setItem('graphiql:headers', '{"x": "y"}'),
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await storage(page)).toEqual({ session: {}, graphiqlLocal: [] });
  });

  suite.test("arrives signed in from the console, and a bad key gets the API's refusal", async ({ page }) => {
    const { apiKey } = await suite.e2e.tenant('ide-from-console');
    await signIn(page, apiKey);
    await nav(page).getByRole('link', { name: 'GraphQL IDE' }).click();
    await page.waitForURL('**/graphql');
    // No key typed: the console's key (this tab's sessionStorage) is already in use, but not
    // written into the field (nor anywhere in the page's HTML).
    expect(await page.getByLabel('API key').inputValue()).toBe('');
    expect(await page.getByLabel('API key').getAttribute('placeholder')).toBe(`key in use: ${apiKey.slice(0, 9)}…`);
    await waitForSchema(page);
    const text = await runAndWaitFor(page, /"admin"/);
    expect(text).toContain('"role": "admin"');
    expect(await page.content()).not.toContain(apiKey);

    await page.getByLabel('API key').fill('weft_not-a-key');
    await page.getByRole('button', { name: 'Use key' }).click();
    // With a refused key there is no schema to wait for: wait for GraphiQL to be mounted afresh.
    await page.locator('.graphiql-container .graphiql-execute-button').waitFor();
    await runAndWaitFor(page, /UNAUTHENTICATED|Invalid API key/);
  });
});
