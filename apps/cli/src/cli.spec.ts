import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { cli } from '../../../test/support/weft-cli.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The timeout of a test that spawns `weft` processes. */
const SPAWN_TIMEOUT_MS = 180_000;

/**
 * `weft <args>` as a separate process from the sources, with `stdin` on its standard input. Such a
 * process transpiles the CLI's sources on load (test/support/ts-loader.mjs; cached afterwards):
 * seconds alone, many more on a loaded machine with a fresh cache, hence {@link SPAWN_TIMEOUT_MS}.
 */
function spawnWeft(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', 'apps/cli/src/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, WEFT_CONFIG: '/nonexistent/weft-test/config.yaml' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe('weft, without a server', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-cli-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prints the package version', async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(await cli({}, '--version')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  describe('usage errors', () => {
    it('are one line and a hint naming the command, exit code 2, nothing on stdout', async () => {
      expect(await cli({}, 'runs', '--foo')).toEqual({ code: 2, stdout: '', stderr: "error: unknown option '--foo'\n(run 'weft runs --help' for usage)\n" });
      expect(await cli({}, 'context', 'use')).toEqual({
        code: 2,
        stdout: '',
        stderr: "error: missing required argument 'name'\n(run 'weft context use --help' for usage)\n",
      });
      expect(await cli({}, 'rn')).toEqual({ code: 2, stdout: '', stderr: "error: unknown command 'rn'\n(Did you mean run?)\n(run 'weft --help' for usage)\n" });
    });

    it('cover malformed values: a bad choice, a bad number, inline text that is not JSON', async () => {
      const cases: [string[], string][] = [
        [['runs', '-o', 'xml'], "error: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, json, yaml."],
        [['runs', '--limit', '0'], "error: option '--limit <n>' argument '0' is invalid. --limit must be a positive integer"],
        [['runs', '--since', 'yesterday'], "error: option '--since <when>' argument 'yesterday' is invalid."],
        [['run', 'wf', '--input', '{bad'], "error: option '--input <json>' argument '{bad' is invalid. --input must be JSON"],
        [['deprecate', 'wf', 'two'], "error: command-argument value 'two' is invalid for argument 'version'. version must be a positive integer"],
        [['default-version', 'wf', '1', '--unpin'], 'error: give a version or --unpin, not both'],
        [['completion', 'fish'], "error: command-argument value 'fish' is invalid for argument 'shell'. Allowed choices are bash, zsh."],
      ];
      for (const [args, message] of cases) {
        const r = await cli({ WEFT_API_KEY: 'k', WEFT_URL: 'http://127.0.0.1:9/graphql' }, ...args);
        expect({ args, code: r.code, first: r.stderr.split('\n')[0]!.slice(0, message.length) }).toEqual({ args, code: 2, first: message });
        expect(r.stderr.split('\n')[1]).toBe(`(run 'weft ${args[0]} --help' for usage)`);
      }
    });

    it('leave a command without its subcommand with the help on stderr, exit code 2', async () => {
      const r = await cli({}, 'keys');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Usage: weft keys [options] [command]');
    });
  });

  describe('failures', () => {
    it('print one error line and exit 1: no key, an API that cannot be reached', async () => {
      const none = await cli({ WEFT_API_KEY: undefined }, 'runs');
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/^error: no API key: pass --api-key, set WEFT_API_KEY, or save one with `weft context add NAME --url URL --api-key KEY`/);
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const down = await cli({ WEFT_API_KEY: 'k' }, 'workflows', '--url', `http://127.0.0.1:${port}/graphql`);
      expect(down).toMatchObject({ code: 1, stdout: '' });
      expect(down.stderr).toMatch(new RegExp(`^error: cannot reach the Weft API at http://127.0.0.1:${port}/graphql \\(ECONNREFUSED\\)`));
    });

    it('name a JSON file that is missing or not JSON, before anything is sent', async () => {
      const missing = join(dir, 'missing.json');
      const r = await cli({ WEFT_API_KEY: 'k', WEFT_URL: 'http://127.0.0.1:9/graphql' }, 'run', 'wf', '--input', `@${missing}`);
      expect(r).toEqual({ code: 1, stdout: '', stderr: `error: --input: cannot read file ${missing}: no such file\n` });
      await writeFile(join(dir, 'payload.yaml'), 'approved: true\n');
      const bad = await cli({ WEFT_API_KEY: 'k' }, 'signal', 'r', 'go', '--payload', `@${join(dir, 'payload.yaml')}`);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(new RegExp(`^error: --payload: file ${join(dir, 'payload.yaml')} is not JSON \\(`));
    });
  });

  describe('validate', () => {
    it('accepts an example definition, offline, and counts its nodes and edges', async () => {
      const file = join(ROOT, 'examples/order-flow.yaml');
      const def = YAML.parse(await readFile(file, 'utf8'));
      const r = await cli({}, 'validate', '-f', file);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout.split('\n')[0]).toBe(`${file}: valid (${def.nodes.length} nodes, ${def.edges.length} edges)`);
    });

    it('counts one node and one edge in the singular', async () => {
      const file = join(dir, 'pair.yaml');
      await writeFile(
        file,
        [
          'nodes:',
          '  - {node_id: a, type: HTTP, spec: {url: "https://shop.example.com/a", method: GET}}',
          '  - {node_id: b, type: HTTP, spec: {url: "https://shop.example.com/b", method: GET}}',
          'edges:',
          '  - {from: a, to: b}',
          '',
        ].join('\n'),
      );
      expect(await cli({}, 'validate', '-f', file)).toEqual({
        code: 0,
        stdout: `${file}: valid (2 nodes, 1 edge)\n  a  HTTP  no retry\n  b  HTTP  no retry\n`,
        stderr: '',
      });
    });

    it("prints each worker node's effective retry policy, and gives it as retryPolicies in JSON", async () => {
      const file = join(dir, 'policies.yaml');
      await writeFile(
        file,
        [
          'nodes:',
          '  - {node_id: charge, type: HTTP, spec: {url: "https://pay.example.com"}, retry: {max_attempts: 3, backoff_seconds: 2, non_retryable: [404, "4xx"]}}',
          '  - {node_id: score, type: CODE, runtime: python, spec: {code: "def handler(x): return x"}, retry: {max_attempts: 2}}',
          '  - {node_id: notify, type: HTTP, spec: {url: "https://mail.example.com"}}',
          '  - {node_id: hold, type: WAIT, spec: {duration_seconds: 5}}',
          'edges:',
          '  - {from: charge, to: score}',
          '  - {from: score, to: notify}',
          '  - {from: notify, to: hold}',
          '',
        ].join('\n'),
      );
      expect(await cli({}, 'validate', '-f', file)).toEqual({
        code: 0,
        stdout: [
          `${file}: valid (4 nodes, 3 edges)`,
          '  charge  HTTP  attempts 3, backoff 2s (2s, 4s), not retried on 404, 4xx (except 408, 425, 429)',
          '  score   CODE  attempts 2, no backoff',
          '  notify  HTTP  no retry',
          '',
        ].join('\n'),
        stderr: '',
      });
      const json = JSON.parse((await cli({}, 'validate', '-f', file, '-o', 'json')).stdout);
      expect(json.retryPolicies).toEqual([
        expect.objectContaining({ nodeId: 'charge', type: 'HTTP', maxAttempts: 3, backoffSeconds: 2, delaysSeconds: [2, 4], nonRetryable: [404, '4xx'] }),
        expect.objectContaining({ nodeId: 'score', type: 'CODE', maxAttempts: 2, delaysSeconds: [0], nonRetryable: [] }),
        expect.objectContaining({ nodeId: 'notify', maxAttempts: 1, text: 'no retry' }),
      ]);
    });

    it("prints the finally step's retry policy after the nodes', and gives it in JSON", async () => {
      const file = join(dir, 'finally.yaml');
      await writeFile(
        file,
        [
          'nodes:',
          '  - {node_id: charge, type: HTTP, spec: {url: "https://pay.example.com"}}',
          'finally: {node_id: cleanup, type: HTTP, spec: {url: "https://tidy.example.com"}, retry: {max_attempts: 2}}',
          '',
        ].join('\n'),
      );
      const r = await cli({}, 'validate', '-f', file);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout.split('\n').slice(1)).toEqual(['  charge             HTTP  no retry', '  cleanup (finally)  HTTP  attempts 2, no backoff', '']);
      const json = JSON.parse((await cli({}, 'validate', '-f', file, '-o', 'json')).stdout);
      expect(json.retryPolicies).toEqual([
        expect.objectContaining({ nodeId: 'charge', maxAttempts: 1 }),
        expect.objectContaining({ nodeId: 'cleanup', type: 'HTTP', maxAttempts: 2, finally: true }),
      ]);
    });

    it('lists every problem with its path and node, exit code 1', async () => {
      const file = join(dir, 'broken.yaml');
      await writeFile(
        file,
        ['nodes:', '  - {node_id: a, type: HTTP, spec: {method: GET}}', '  - {node_id: b, type: TELEPORT}', 'edges:', '  - {from: a, to: nowhere}', ''].join(
          '\n',
        ),
      );
      const r = await cli({}, 'validate', '-f', file);
      expect(r.code).toBe(1);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(new RegExp(`^${file}: \\d+ problems$`));
      expect(lines.slice(1).every((l) => l.startsWith('  - '))).toBe(true);
      expect(lines.some((l) => l.startsWith('  - nodes[0].spec.url (node a): '))).toBe(true);
      expect(lines.some((l) => l.startsWith('  - nodes[1].type (node b): '))).toBe(true);
      expect(lines.some((l) => l.startsWith('  - edges[0].to ') && l.includes('"nowhere"'))).toBe(true);

      const json = await cli({}, 'validate', '-f', file, '-o', 'json');
      expect(json.code).toBe(1);
      const parsed = JSON.parse(json.stdout);
      expect(parsed).toMatchObject({ file, valid: false });
      expect(parsed.problems).toHaveLength(lines.length - 1);
      expect(parsed.problems).toContainEqual(expect.objectContaining({ path: 'edges[0].to' }));
    });

    it('reports a YAML syntax error with its line, and a file that cannot be read', async () => {
      const file = join(dir, 'syntax.yaml');
      await writeFile(file, 'nodes:\n  - {node_id: a\n');
      const r = await cli({}, 'validate', '-f', file);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^.*: 1 problem\n {2}- line \d+, column \d+: YAML syntax error/);
      expect(await cli({}, 'validate', '-f', join(dir, 'none.yaml'))).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: cannot read ${join(dir, 'none.yaml')}: no such file\n`,
      });
    });
  });

  describe('contexts', () => {
    let config: string;
    const env = () => ({ WEFT_CONFIG: config, WEFT_URL: undefined, WEFT_API_KEY: undefined });
    const KEY_A = 'weft_AAAAAAAAsecretpart-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const KEY_B = 'weft_BBBBBBBBsecretpart-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
    beforeAll(() => {
      config = join(dir, 'contexts/config.yaml');
    });

    it('adds contexts to a file only its owner may read, the first one current', async () => {
      expect(await cli(env(), 'context', 'add', 'local', '--url', 'http://127.0.0.1:4000', '--api-key', `Bearer ${KEY_A}`)).toEqual({
        code: 0,
        stdout: `context local added and is the current context (${config})\n`,
        stderr: [
          "note: --url http://127.0.0.1:4000 has no path: using http://127.0.0.1:4000/graphql, the API's endpoint",
          'note: --api-key starts with "Bearer": using the key without it (the client sends "Bearer" itself)',
          '',
        ].join('\n'),
      });
      expect((await cli(env(), 'context', 'add', 'prod', '--url', 'https://weft.example.com/graphql', '--api-key', KEY_B)).stdout).toBe(
        `context prod added (${config})\n`,
      );
      expect((await stat(config)).mode & 0o777).toBe(0o600);
      expect(YAML.parse(await readFile(config, 'utf8'))).toEqual({
        current_context: 'local',
        contexts: { local: { url: 'http://127.0.0.1:4000/graphql', api_key: KEY_A }, prod: { url: 'https://weft.example.com/graphql', api_key: KEY_B } },
      });
    });

    it('lists them with the current one marked and the keys shortened, in every format', async () => {
      const table = await cli(env(), 'context', 'list');
      expect(table.stdout.split('\n')).toEqual([
        'CURRENT  NAME   URL                               API KEY',
        '*        local  http://127.0.0.1:4000/graphql     weft_AAAAAAAA…',
        '         prod   https://weft.example.com/graphql  weft_BBBBBBBB…',
        '',
      ]);
      const json = JSON.parse((await cli(env(), 'context', 'list', '-o', 'json')).stdout);
      expect(json).toEqual([
        { name: 'local', current: true, url: 'http://127.0.0.1:4000/graphql', apiKey: 'weft_AAAAAAAA…' },
        { name: 'prod', current: false, url: 'https://weft.example.com/graphql', apiKey: 'weft_BBBBBBBB…' },
      ]);
      const yaml = (await cli(env(), 'context', 'list', '-o', 'yaml')).stdout;
      expect(YAML.parse(yaml)).toEqual(json);
      for (const out of [table.stdout, JSON.stringify(json), yaml]) {
        expect(out).not.toContain('secretpart');
      }
    });

    it('switches and removes contexts; an unknown one is an error naming those there are', async () => {
      expect((await cli(env(), 'context', 'use', 'prod')).stdout).toBe('current context: prod (https://weft.example.com/graphql)\n');
      expect(YAML.parse(await readFile(config, 'utf8')).current_context).toBe('prod');
      expect(await cli(env(), 'context', 'use', 'staging')).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: no context "staging" in ${config} (contexts: local, prod)\n`,
      });
      expect((await cli(env(), 'context', 'remove', 'prod')).stdout).toBe('context prod removed; no context is current now (`weft context use NAME`)\n');
      expect(YAML.parse(await readFile(config, 'utf8'))).toEqual({ contexts: { local: { url: 'http://127.0.0.1:4000/graphql', api_key: KEY_A } } });
      expect((await cli(env(), 'context', 'add', 'bad/name', '--url', 'http://h/graphql', '--api-key', 'k')).code).toBe(2);
    });
  });

  describe('which API and key a command uses', () => {
    let server: Server;
    let base: string;
    const seen: { path: string; authorization: string | undefined }[] = [];
    const bodies: { query: string; variables: Record<string, any> }[] = [];
    beforeAll(async () => {
      server = createServer((req: IncomingMessage, res) => {
        seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
        let raw = '';
        req.on('data', (c) => (raw += c));
        req.on('end', () => {
          const body = JSON.parse(raw);
          bodies.push(body);
          res.writeHead(200, { 'content-type': 'application/json' });
          const data = body.query.includes('sendSignal')
            ? { sendSignal: { delivered: true } }
            : body.query.includes('retryRun')
              ? { retryRun: { id: body.variables.i.runId, status: 'RUNNING', workflowId: 'w', version: 1, labels: {}, createdAt: '2030-01-01T00:00:00Z' } }
              : { workflows: [] };
          res.end(JSON.stringify({ data }));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    /** The path and Authorization header of the request `weft workflows <args>` sent with `env`. */
    async function sent(env: Record<string, string | undefined>, ...args: string[]) {
      seen.length = 0;
      const r = await cli(env, 'workflows', ...args);
      expect(r).toMatchObject({ code: 0 });
      return { ...seen[0], stderr: r.stderr };
    }

    it('prefers the flag to the environment, the environment to the current context', async () => {
      const config = join(dir, 'precedence.yaml');
      await writeFile(config, YAML.stringify({ current_context: 'ctx', contexts: { ctx: { url: `${base}/from-context`, api_key: 'context-key' } } }), {
        mode: 0o600,
      });
      const noEnv = { WEFT_CONFIG: config, WEFT_URL: undefined, WEFT_API_KEY: undefined };
      expect(await sent(noEnv)).toEqual({ path: '/from-context', authorization: 'Bearer context-key', stderr: '' });
      const withEnv = { ...noEnv, WEFT_URL: `${base}/from-env`, WEFT_API_KEY: 'env-key' };
      expect(await sent(withEnv)).toMatchObject({ path: '/from-env', authorization: 'Bearer env-key' });
      expect(await sent(withEnv, '--url', `${base}/from-flag`, '--api-key', 'flag-key')).toMatchObject({
        path: '/from-flag',
        authorization: 'Bearer flag-key',
      });
      expect(await sent({ ...noEnv, WEFT_API_KEY: 'env-key' })).toMatchObject({ path: '/from-context', authorization: 'Bearer env-key' });
    });

    it('sends to /graphql when the URL has no path and drops "Bearer" from a key, saying so on stderr', async () => {
      const r = await sent({ WEFT_URL: base, WEFT_API_KEY: 'Bearer the-key' });
      expect(r).toEqual({
        path: '/graphql',
        authorization: 'Bearer the-key',
        stderr: `note: WEFT_URL ${base} has no path: using ${base}/graphql, the API's endpoint\nnote: WEFT_API_KEY starts with "Bearer": using the key without it (the client sends "Bearer" itself)\n`,
      });
    });

    it('retry --failed-iterations-only asks for the failed iterations of the --from node only', async () => {
      bodies.length = 0;
      const env = { WEFT_URL: `${base}/graphql`, WEFT_API_KEY: 'k' };
      expect(await cli(env, 'retry', 'run-1', '--from', 'fetch', '--failed-iterations-only')).toEqual({ code: 0, stdout: 'run run-1 RUNNING\n', stderr: '' });
      expect(bodies[0]!.variables).toEqual({ i: { runId: 'run-1', fromNodeId: 'fetch', failedIterationsOnly: true } });
      await cli(env, 'retry', 'run-1', '--from', 'fetch');
      expect(bodies[1]!.variables).toEqual({ i: { runId: 'run-1', fromNodeId: 'fetch' } });
    });

    it(
      'reads --payload @- from stdin, in a process of its own',
      async () => {
        bodies.length = 0;
        const r = await spawnWeft(['signal', 'run-1', 'approve', '--payload', '@-', '--url', `${base}/graphql`, '--api-key', 'k'], '{"approved_by": "me"}\n');
        expect(r).toEqual({ code: 0, stdout: 'delivered\n', stderr: '' });
        expect(bodies[0]!.variables).toEqual({ i: { runId: 'run-1', name: 'approve', payload: { approved_by: 'me' } } });
      },
      SPAWN_TIMEOUT_MS,
    );

    it('warns when a key comes from a config file others may read', async () => {
      const config = join(dir, 'shared.yaml');
      await writeFile(config, YAML.stringify({ current_context: 'c', contexts: { c: { url: `${base}/graphql`, api_key: 'k' } } }), { mode: 0o644 });
      expect((await sent({ WEFT_CONFIG: config, WEFT_URL: undefined, WEFT_API_KEY: undefined })).stderr).toBe(
        `warning: ${config} holds API keys and others may read it: chmod 600 ${config}\n`,
      );
    });
  });

  describe('as a process', () => {
    it(
      'exits with the codes runCli returns and reads -f - from stdin',
      async () => {
        const usage = await spawnWeft(['runs', '--foo']);
        expect(usage).toEqual({ code: 2, stdout: '', stderr: "error: unknown option '--foo'\n(run 'weft runs --help' for usage)\n" });
        const definition = await readFile(join(ROOT, 'examples/order-flow.yaml'), 'utf8');
        const valid = await spawnWeft(['validate', '-f', '-', '-o', 'json'], definition);
        expect({ code: valid.code, valid: JSON.parse(valid.stdout).valid }).toEqual({ code: 0, valid: true });
        const invalid = await spawnWeft(['validate', '-f', '-'], 'nodes: []\n');
        expect(invalid.code).toBe(1);
        expect(invalid.stdout).toMatch(/^stdin: \d+ problems?\n/);
      },
      SPAWN_TIMEOUT_MS,
    );
  });
});
