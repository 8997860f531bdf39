import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { WeftLogger } from '@weft/platform';
import { jsNode, publish, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';
import { stubServer } from '../support/faults.js';

/**
 * A `sensitive: true` node's values stay out of its errors: a failing attempt's error names
 * neither its resolved url, headers and body nor any resolved input value, wherever it is shown
 * or copied — the task (Task.error), the run, the history (NodeFailed), a parent run's SUBWORKFLOW
 * task and the processes' logs — while a node that is not sensitive still names its url.
 */
const SECRET = 'SUPERSECRET-TOKEN-123';

/** What a viewer reads, as JSON, without the run's own config and the tasks' inputs (which hold the secret by design). */
const shownText = (v: unknown): string => JSON.stringify(v, (k, x) => (k === 'config' || k === 'input' ? undefined : x));

describe('a sensitive node that fails', () => {
  let e2e: E2E;
  let client: WeftClient;
  let stub: Awaited<ReturnType<typeof stubServer>>;
  const seenUrls: string[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    // The upstream answers 500 and echoes the request line back, secret included.
    stub = await stubServer((req, res) => {
      seenUrls.push(req.url ?? '');
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`upstream failed for ${req.url}`);
    });
    const logger = new WeftLogger('debug', { write: (line: string) => void logLines.push(line) });
    e2e = await startE2E({}, { logger });
    ({ client } = await e2e.tenant('sensitive'));
    await publish(client, 'vault', {
      nodes: [
        { node_id: 'split', type: 'FORK' },
        {
          node_id: 'secret',
          type: 'HTTP',
          sensitive: true,
          retry: { max_attempts: 2, backoff_seconds: 0 },
          spec: { url: `${stub.base}/fail?user=me&token={{config.api_token}}`, headers: { authorization: 'Bearer {{config.api_token}}' } },
        },
        { node_id: 'public', type: 'HTTP', spec: { url: `${stub.base}/fail?user=me&page=2` } },
        {
          ...jsNode('script', 'throw new Error("cannot use key " + input.key + " in " + JSON.stringify(input));', { key: '{{config.api_token}}' }),
          sensitive: true,
        },
      ],
      edges: [
        { from: 'split', to: 'secret' },
        { from: 'split', to: 'public' },
        { from: 'split', to: 'script' },
      ],
    });
    await publish(client, 'vault-call', {
      nodes: [{ node_id: 'secret', type: 'HTTP', sensitive: true, spec: { url: `${stub.base}/fail?token={{config.api_token}}` } }],
    });
    await publish(client, 'caller', {
      nodes: [{ node_id: 'child', type: 'SUBWORKFLOW', spec: { workflow: 'vault-call', config: '{{config}}' } }],
    });
  });
  afterAll(async () => {
    await e2e.close();
    await stub.close();
  });

  it('shows HTTP GET <redacted url> returned status 500 in Task.error, the run and the history, and logs no secret', async () => {
    const runId = await start(client, 'vault', {}, { config: { api_token: SECRET } });
    const run = await waitRun(client, runId);
    expect(run.status).toBe('FAILED');
    // The secret was really resolved and sent.
    expect(seenUrls.some((u) => u.includes(`token=${SECRET}`))).toBe(true);

    expect(task(run, 'secret')).toMatchObject({ status: 'FAILED', attempt: 1, error: 'HTTP GET <redacted url> returned status 500' });
    expect(task(run, 'script').status).toBe('FAILED');
    expect(task(run, 'script').error).toContain('cannot use key <redacted>');
    // A node that is not sensitive still says which url failed, and what it answered.
    expect(task(run, 'public').error).toBe(`HTTP GET ${stub.base}/fail?user=me&page=2 returned status 500: upstream failed for /fail?user=me&page=2`);

    const history = (
      await client.request(`query($id: ID!) { run(id: $id) { error history { type nodeId attempt payload actions ignored error } } }`, { id: runId })
    ).run;
    const failed = history.history.filter((e: any) => e.type === 'NodeFailed' && e.nodeId === 'secret');
    expect(failed.map((e: any) => e.payload.error)).toEqual(['HTTP GET <redacted url> returned status 500', 'HTTP GET <redacted url> returned status 500']);
    // The run's error repeats the nodes' errors as the tasks show them: the sensitive ones redacted.
    expect(history.error).toBe(
      'node secret failed: HTTP GET <redacted url> returned status 500; ' +
        `node public failed: HTTP GET ${stub.base}/fail?user=me&page=2 returned status 500: upstream failed for /fail?user=me&page=2; ` +
        `node script failed: ${task(run, 'script').error}`,
    );
    expect(shownText({ run, history })).not.toContain(SECRET);

    // The worker logged each failure, without the secret.
    const logged = logLines.join('');
    expect(logged).toContain(`node secret attempt 2 failed: HTTP GET <redacted url> returned status 500`);
    expect(logged).toContain('node script attempt 1 failed');
    expect(logged).not.toContain(SECRET);
  });

  it('keeps the secret out of a parent run that copies the failed child node’s error', async () => {
    const runId = await start(client, 'caller', {}, { config: { api_token: SECRET } });
    const run = await waitRun(client, runId);
    expect(run.status).toBe('FAILED');
    expect(task(run, 'child').error).toMatch(/^child run \S+ failed: node secret failed: HTTP GET <redacted url> returned status 500$/);
    const history = (
      await client.request(
        `query($id: ID!) { run(id: $id) { history { payload actions error } children { error tasks { error } history { payload error } } } }`,
        { id: runId },
      )
    ).run;
    expect(shownText({ run, history })).not.toContain(SECRET);
    expect(logLines.join('')).not.toContain(SECRET);
  });
});
