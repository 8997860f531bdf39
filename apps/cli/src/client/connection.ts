import type { Command } from 'commander';
import { WeftClient } from '@weft/client';
import { configPath, isShared, loadCliConfig, type CliConfig } from './cli-config.js';

/** Where the API is when nothing says otherwise: `weft dev` on this machine. */
export const DEFAULT_URL = 'http://127.0.0.1:4000/graphql';

/** The `--url` and `--api-key` flags of a client command. */
export interface ConnectionFlags {
  url?: string;
  apiKey?: string;
}

/** Where the URL or the key came from, as messages name it: `--url`, `WEFT_URL`, `context prod`, `the default`. */
export type Source = string;

/** The endpoint and key a client command uses, with where each came from and what was corrected. */
export interface Connection {
  url: string;
  apiKey: string;
  urlSource: Source;
  keySource: Source;
  /** One line per value that was corrected (a URL without `/graphql`, a key given as `Bearer …`). */
  notes: string[];
}

/**
 * The URL a client talks to, from `raw` as given by `source`: trimmed; a URL whose path is empty
 * or `/` (the server's root, `http://127.0.0.1:4000`) gets the API's path `/graphql`, with a note
 * saying so. Any other path is kept (a proxy may serve the API elsewhere).
 * @throws Error naming the source when `raw` is not an http(s) URL.
 */
export function normalizeUrl(raw: string, source: Source): { url: string; note?: string } {
  const text = raw.trim();
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new Error(`${source} ${JSON.stringify(raw)} is not a URL: give the API's endpoint, e.g. ${DEFAULT_URL}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`${source} ${JSON.stringify(raw)} must be an http:// or https:// URL, e.g. ${DEFAULT_URL} (subscriptions use the same URL)`);
  }
  if (u.pathname !== '/' || u.search || u.hash) return { url: text };
  u.pathname = '/graphql';
  const url = u.toString();
  return { url, note: `${source} ${text} has no path: using ${url}, the API's endpoint` };
}

/**
 * The API key from `raw` as given by `source`: trimmed; a key pasted as `Bearer weft_…` (or as a
 * whole `Authorization: Bearer …` header) loses that prefix, with a note saying so (the client
 * adds `Bearer` itself).
 */
export function normalizeApiKey(raw: string, source: Source): { apiKey: string; note?: string } {
  const text = raw.trim();
  const m = /^(?:authorization:\s*)?bearer\s+(\S.*)$/i.exec(text);
  if (!m) return { apiKey: text };
  return { apiKey: m[1]!.trim(), note: `${source} starts with "Bearer": using the key without it (the client sends "Bearer" itself)` };
}

/**
 * Decides the URL and the key, each on its own, by precedence: the flag (`--url`,
 * `--api-key`), then the environment (`WEFT_URL`, `WEFT_API_KEY`), then the config's current
 * context, then (for the URL only) {@link DEFAULT_URL}. Empty values count as unset.
 * @throws Error saying how to give a key when no source has one, or naming the source of a bad URL;
 *   Error when the current context names a context the config does not hold.
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv, config: CliConfig): Connection {
  const given = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';
  const current = config.current_context;
  const context = current === undefined ? undefined : config.contexts[current];
  const needsContext = !(given(flags.url) || given(env.WEFT_URL)) || !(given(flags.apiKey) || given(env.WEFT_API_KEY));
  if (needsContext && current !== undefined && !context) {
    throw new Error(
      `the current context ${JSON.stringify(current)} is not in the config file: \`weft context use NAME\` another one (see \`weft context list\`)`,
    );
  }
  const pick = (candidates: [string | undefined, Source][]) => candidates.find(([v]) => given(v)) as [string, Source] | undefined;
  const [rawUrl, urlSource] = pick([
    [flags.url, '--url'],
    [env.WEFT_URL, 'WEFT_URL'],
    [context?.url, `context ${current}`],
  ]) ?? [DEFAULT_URL, 'the default URL'];
  const key = pick([
    [flags.apiKey, '--api-key'],
    [env.WEFT_API_KEY, 'WEFT_API_KEY'],
    [context?.api_key, `context ${current}`],
  ]);
  if (!key) {
    throw new Error(
      'no API key: pass --api-key, set WEFT_API_KEY, or save one with `weft context add NAME --url URL --api-key KEY` (create a tenant and its key with `weft admin create-tenant NAME`)',
    );
  }
  const url = normalizeUrl(rawUrl, urlSource);
  const apiKey = normalizeApiKey(key[0], key[1]);
  return { url: url.url, apiKey: apiKey.apiKey, urlSource, keySource: key[1], notes: [url.note, apiKey.note].filter((n): n is string => !!n) };
}

/** Adds `--url` and `--api-key` to a client command. */
export function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', `the API's GraphQL endpoint (default: $WEFT_URL, the current context, or ${DEFAULT_URL})`)
    .option('--api-key <key>', 'the API key (default: $WEFT_API_KEY or the current context)');
}

/**
 * A client for a command, from its flags, the process environment and the config file (see
 * {@link resolveConnection}); prints each correction, and a warning when the config file may be
 * read by others, on stderr.
 */
export async function connect(flags: ConnectionFlags): Promise<WeftClient> {
  const env = process.env;
  const path = configPath(env);
  const config = await loadCliConfig(path);
  const c = resolveConnection(flags, env, config);
  for (const note of c.notes) process.stderr.write(`note: ${note}\n`);
  if (c.keySource.startsWith('context ') && (await isShared(path))) {
    process.stderr.write(`warning: ${path} holds API keys and others may read it: chmod 600 ${path}\n`);
  }
  return new WeftClient(c.url, c.apiKey);
}

/** Runs `fn` with a client for `flags` ({@link connect}), closing its WebSocket, if any, afterwards. */
export async function withClient<T>(flags: ConnectionFlags, fn: (c: WeftClient) => Promise<T>): Promise<T> {
  const c = await connect(flags);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}
