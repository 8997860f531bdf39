import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import YAML from 'yaml';

/** One named API endpoint and the key to use there. */
export interface CliContext {
  /** The GraphQL endpoint, e.g. `https://weft.example.com/graphql`. */
  url: string;
  /** The API key (`weft_…`), sent as `Authorization: Bearer`. */
  api_key: string;
}

/**
 * The CLI's config file, in YAML:
 * ```yaml
 * current_context: prod
 * contexts:
 *   prod: {url: https://weft.example.com/graphql, api_key: weft_…}
 * ```
 */
export interface CliConfig {
  current_context?: string;
  contexts: Record<string, CliContext>;
}

/**
 * Where the config file lives: `$WEFT_CONFIG`, else `$XDG_CONFIG_HOME/weft/config.yaml`, else
 * `~/.config/weft/config.yaml`. Empty variables count as unset.
 */
export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.WEFT_CONFIG) return env.WEFT_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'weft', 'config.yaml');
}

/** What a context name may be: a letter or digit, then letters, digits, `.`, `_` or `-`; 1 to 63 characters. */
export const CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/**
 * Reads the config file at `path`; a file that does not exist is an empty config.
 * @throws Error naming the file when it cannot be read, is not YAML, or does not have the shape
 *   of {@link CliConfig} (each context a `url` and an `api_key` string).
 */
export async function loadCliConfig(path: string): Promise<CliConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {} };
    throw new Error(`cannot read the config file ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new Error(`the config file ${path} is not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc == null) return { contexts: {} };
  const bad = (what: string) => new Error(`the config file ${path} is malformed: ${what}`);
  if (typeof doc !== 'object' || Array.isArray(doc)) throw bad('it must be a mapping with current_context and contexts');
  const { current_context: current, contexts = {} } = doc as { current_context?: unknown; contexts?: unknown };
  if (current !== undefined && current !== null && typeof current !== 'string') throw bad('current_context must be a name');
  if (contexts === null || typeof contexts !== 'object' || Array.isArray(contexts)) throw bad('contexts must map names to {url, api_key}');
  const out: Record<string, CliContext> = {};
  for (const [name, c] of Object.entries(contexts as Record<string, unknown>)) {
    const ctx = c as Partial<CliContext> | null;
    if (!ctx || typeof ctx.url !== 'string' || typeof ctx.api_key !== 'string') throw bad(`context ${JSON.stringify(name)} needs a url and an api_key`);
    out[name] = { url: ctx.url, api_key: ctx.api_key };
  }
  return { ...(typeof current === 'string' ? { current_context: current } : {}), contexts: out };
}

/**
 * Writes `config` to `path`, readable by its owner only (mode 0600, its folder 0700 when
 * created): to a temporary file beside it first, then renamed over it, so a reader never sees
 * half a file.
 */
export async function saveCliConfig(path: string, config: CliConfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const text = `# weft CLI contexts: written by \`weft context\`; holds API keys, keep it private.\n${YAML.stringify(config)}`;
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/** True when the file at `path` exists and its group or others may read or write it. */
export async function isShared(path: string): Promise<boolean> {
  try {
    return ((await stat(path)).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}
