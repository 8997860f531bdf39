import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the console's built pages are: `WEFT_CONSOLE_DIR` when set, else `dist/console` of this
 * checkout (found from this file both in the compiled tree, dist/apps/api/src/console, and in
 * the sources, apps/api/src/console). Null when no build is there (`npm run build` makes one).
 */
export function consoleDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.WEFT_CONSOLE_DIR) return existsSync(join(env.WEFT_CONSOLE_DIR, 'index.html')) ? resolve(env.WEFT_CONSOLE_DIR) : null;
  const up4 = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
  for (const candidate of [join(up4, 'console'), join(up4, 'dist/console')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  return null;
}

/**
 * The headers of every console page and asset. The policy lets a page load only this origin's
 * scripts, styles, fonts and images, connect only back to this origin (HTTP and the graphql-ws
 * socket), start workers from this origin or blobs (the IDE's editor), and never be framed.
 * Inline styles are allowed: the graph and the IDE's editor position elements with them.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/**
 * The console's client-side routes: GET on these serves index.html (the page routes itself).
 * Ids may hold dots (`/workflows/billing.v2`); the console's own files are all under /assets.
 */
export const CONSOLE_ROUTES = /^\/(?:(?:runs|workflows|schedules|queues|flow|keys|settings|webhooks)(?:\/.*)?)?$/;
