import { InvalidArgumentError, type Command } from 'commander';
import { configPath, CONTEXT_NAME, loadCliConfig, saveCliConfig, type CliConfig } from './cli-config.js';
import { normalizeApiKey, normalizeUrl } from './connection.js';
import { printAs, table, withOutput, type OutputFormat } from './output.js';

/** Characters of a key `weft keys list` shows too: `weft_` and 8 more. */
const SHOWN_KEY_CHARS = 13;

/**
 * An API key for display: its first characters (at most the 13 `weft keys list` shows as the
 * prefix, and at most a quarter of the key) followed by `…`; never the whole key.
 */
export function maskKey(key: string): string {
  return `${key.slice(0, Math.min(SHOWN_KEY_CHARS, Math.floor(key.length / 4)))}…`;
}

function contextName(v: string): string {
  if (!CONTEXT_NAME.test(v)) throw new InvalidArgumentError('a context name is 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit');
  return v;
}

/** The config and its path, read for a `context` command. */
async function load(): Promise<{ path: string; config: CliConfig }> {
  const path = configPath(process.env);
  return { path, config: await loadCliConfig(path) };
}

/** The error for a context the config does not hold, listing those it does. */
function unknownContext(name: string, config: CliConfig, path: string): Error {
  const known = Object.keys(config.contexts);
  return new Error(
    `no context ${JSON.stringify(name)} in ${path}${known.length ? ` (contexts: ${known.join(', ')})` : ': add one with `weft context add NAME --url URL --api-key KEY`'}`,
  );
}

/** Registers `context add|use|list|remove`: named API endpoints and keys in the config file. */
export function contextCommands(program: Command): void {
  const context = program.command('context').description('manage named contexts (an API URL and key each) in $WEFT_CONFIG or ~/.config/weft/config.yaml');

  withOutput(context.command('add'))
    .argument('<name>', 'the context name', contextName)
    .description('add a context, or replace the one of that name; the first context added becomes the current one')
    .requiredOption('--url <url>', "the API's GraphQL endpoint, e.g. https://weft.example.com/graphql")
    .requiredOption('--api-key <key>', 'the API key')
    .option('--use', 'make it the current context')
    .action(async (name: string, o: { url: string; apiKey: string; use?: boolean; output: OutputFormat }) => {
      const url = normalizeUrl(o.url, '--url');
      const key = normalizeApiKey(o.apiKey, '--api-key');
      for (const note of [url.note, key.note]) if (note) process.stderr.write(`note: ${note}\n`);
      if (!key.apiKey) throw new Error('--api-key is empty');
      const { path, config } = await load();
      const replaced = name in config.contexts;
      config.contexts[name] = { url: url.url, api_key: key.apiKey };
      const current = o.use || config.current_context === undefined;
      if (current) config.current_context = name;
      await saveCliConfig(path, config);
      const shown = { name, current, url: url.url, apiKey: maskKey(key.apiKey), replaced, file: path };
      printAs(o.output, shown, () => `context ${name} ${replaced ? 'replaced' : 'added'}${current ? ' and is the current context' : ''} (${path})\n`);
    });

  withOutput(context.command('use <name>'))
    .description('make a context the current one')
    .action(async (name: string, o: { output: OutputFormat }) => {
      const { path, config } = await load();
      if (!(name in config.contexts)) throw unknownContext(name, config, path);
      config.current_context = name;
      await saveCliConfig(path, config);
      const url = config.contexts[name]!.url;
      printAs(o.output, { name, current: true, url }, () => `current context: ${name} (${url})\n`);
    });

  withOutput(context.command('list'))
    .description('list the contexts, marking the current one with *; keys are shortened, never shown whole')
    .action(async (o: { output: OutputFormat }) => {
      const { config } = await load();
      const contexts = Object.entries(config.contexts).map(([name, c]) => ({
        name,
        current: name === config.current_context,
        url: c.url,
        apiKey: maskKey(c.api_key),
      }));
      printAs(o.output, contexts, () =>
        table(
          ['CURRENT', 'NAME', 'URL', 'API KEY'],
          contexts.map((c) => [c.current ? '*' : '', c.name, c.url, c.apiKey]),
        ),
      );
    });

  withOutput(context.command('remove <name>'))
    .description('remove a context (when it is the current one, no context is current afterwards)')
    .action(async (name: string, o: { output: OutputFormat }) => {
      const { path, config } = await load();
      if (!(name in config.contexts)) throw unknownContext(name, config, path);
      delete config.contexts[name];
      const wasCurrent = config.current_context === name;
      if (wasCurrent) delete config.current_context;
      await saveCliConfig(path, config);
      printAs(
        o.output,
        { name, removed: true, wasCurrent },
        () => `context ${name} removed${wasCurrent ? '; no context is current now (`weft context use NAME`)' : ''}\n`,
      );
    });
}
