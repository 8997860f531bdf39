import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunRepository } from '@weft/persistence';
import { DEFAULT_MAX_OUTPUT_BYTES, type JsonValue, type WorkflowNode } from '@weft/engine';
import { loadConfig } from '@weft/platform';
import { WeftClient } from '@weft/client';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { createTenant, def, edge, http, publishWorkflow } from '../support/builders.js';
import { eventually, startWorkerPlatform, stubServer } from '../support/faults.js';

/**
 * Outputs a worker may produce that cannot become a task output: characters
 * PostgreSQL cannot store, outputs over the size limit, values nested too deep, and what is not
 * JSON at all. Each fails that attempt with an error naming the problem, the node's retries run,
 * and the run ends FAILED — never RUNNING for good. And what can be stored comes back byte for
 * byte, through CODE in both runtimes, the database and the API.
 *
 * Extends unstorable-values.int-spec.ts (the coordinator's checks, one attempt, the default limit)
 * and worker.int-spec.ts (a few CODE cases, one attempt) with the size limit at its boundary, the
 * limit configured through WEFT_MAX_OUTPUT_BYTES, and CODE and HTTP outputs end to end.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 12 });
});
afterAll(async () => {
  await db?.drop();
});

const MiB = 1024 * 1024;

describe('the output size limit, measured in UTF-8 bytes of the JSON text', () => {
  it('lets exactly 1 MiB through by default and fails one byte more with OUTPUT_TOO_LARGE', async () => {
    expect(DEFAULT_MAX_OUTPUT_BYTES).toBe(1_048_576);
    expect(loadConfig({}).maxOutputBytes).toBe(1_048_576);
    const h = await coordinatorHarness(db.ds, { now: undefined });
    const exact = await h.start(def([http('a')]));
    await h.complete('a', 'x'.repeat(MiB - 2)); // "…" : 1 048 576 bytes with its quotes
    expect((await h.tasks(exact)).a).toMatchObject({ status: 'COMPLETED' });
    expect((await h.run(exact)).status).toBe('SUCCEEDED');

    const over = await h.start(def([http('a')]));
    await h.complete('a', 'x'.repeat(MiB - 1));
    expect((await h.tasks(over)).a).toMatchObject({ status: 'FAILED', output: null, error: 'output too large: 1 MiB > 1 MiB (OUTPUT_TOO_LARGE)' });
    expect((await h.run(over)).status).toBe('FAILED');
  });

  it('counts UTF-8 bytes, not characters: 400 000 euro signs are 1.1 MiB', async () => {
    const h = await coordinatorHarness(db.ds, { now: undefined });
    const fits = await h.start(def([http('a')]));
    await h.complete('a', '€'.repeat(349_524)); // 3 bytes each: 1 048 572 + 2 quotes
    expect((await h.tasks(fits)).a!.status).toBe('COMPLETED');
    const tooMany = await h.start(def([http('a')]));
    await h.complete('a', '€'.repeat(400_000)); // 400 000 UTF-16 units, 1 200 002 bytes
    expect((await h.tasks(tooMany)).a).toMatchObject({ status: 'FAILED', error: 'output too large: 1.1 MiB > 1 MiB (OUTPUT_TOO_LARGE)' });
  });

  it('reads WEFT_MAX_OUTPUT_BYTES, refusing values that are not a positive integer', () => {
    expect(loadConfig({ WEFT_MAX_OUTPUT_BYTES: '65536' }).maxOutputBytes).toBe(65_536);
    for (const bad of ['0', '-1', '1.5', 'lots']) {
      expect(() => loadConfig({ WEFT_MAX_OUTPUT_BYTES: bad })).toThrow(/WEFT_MAX_OUTPUT_BYTES=/);
    }
  });
});

describe('a worker with WEFT_MAX_OUTPUT_BYTES=65536, end to end', () => {
  const LIMIT = 64 * 1024;
  let platform: Awaited<ReturnType<typeof startWorkerPlatform>>;
  let stub: Awaited<ReturnType<typeof stubServer>>;
  let tenantId: string;
  let apiKey: string;

  beforeAll(async () => {
    stub = await stubServer((req, res) => {
      const bodies: Record<string, string> = {
        '/nul': '{"name":"a\\u0000b"}',
        '/surrogate': '{"name":"\\ud800"}',
        '/big': JSON.stringify({ blob: 'y'.repeat(100 * 1024) }),
        '/nul-text': 'plain text with a \u0000 byte',
      };
      const body = bodies[req.url ?? ''] ?? '{}';
      res.writeHead(200, { 'content-type': req.url === '/nul-text' ? 'text/plain' : 'application/json' }).end(body);
    });
    platform = await startWorkerPlatform(db, { WEFT_MAX_OUTPUT_BYTES: LIMIT, WEFT_QUEUES: 'http,js,python' }, { api: true, worker: true, scheduler: true });
    ({ tenantId, apiKey } = await createTenant(db.ds));
  });
  afterAll(async () => {
    await platform?.close();
    await stub?.close();
  });

  const runs = () => new RunRepository(db.ds);
  const twice = { retry: { max_attempts: 2, backoff_seconds: 0.1 } };
  const js = (body: string): WorkflowNode => ({
    node_id: 'c',
    type: 'CODE',
    runtime: 'js',
    spec: { code: `function handler(input) {\n${body}\n}\n` },
    ...twice,
  });
  const py = (body: string): WorkflowNode => ({
    node_id: 'c',
    type: 'CODE',
    runtime: 'python',
    spec: { code: `def handler(input):\n${body.replace(/^/gm, '    ')}\n` },
    ...twice,
  });
  /** An HTTP node fetching `path` from the stub (its address comes in the run's config). */
  const get = (path: string): WorkflowNode => http('c', { url: `{{config.stub}}${path}` }, twice);

  /** Starts one run per node at once; resolves each run once it ended, with its task `c` and history. */
  async function runAll(nodes: WorkflowNode[]) {
    const started = await Promise.all(
      nodes.map(async (node) => {
        const { workflowId } = await publishWorkflow(db.ds, tenantId, def([node]));
        return (await platform.coordinator.runs.startRun(tenantId, { workflowId, config: { stub: stub.base } })).runId;
      }),
    );
    return Promise.all(
      started.map(async (runId) => {
        const run = await eventually(
          `run ${runId} ends`,
          async () => {
            const r = await runs().findRun(tenantId, runId);
            return r && r.status !== 'RUNNING' ? r : undefined;
          },
          45_000,
          50,
        ); // a safety net, not a speed check: 44 CODE attempts share the worker with other suites
        const task = (await runs().tasksOfRun(tenantId, runId)).find((t) => t.nodeId === 'c')!;
        const events = (await runs().eventsOfRun(tenantId, runId)).map(
          (e) => `${e.type}${e.attempt === null ? '' : `:${e.attempt}`}${e.ignored ? ' (ignored)' : ''}`,
        );
        return { run, task, events };
      }),
    );
  }

  const deep = (n: number) => `let v = [];\nfor (let i = 0; i < ${n}; i++) v = [v];\nreturn v;`;
  const cases: [string, WorkflowNode, RegExp | string][] = [
    // Characters PostgreSQL cannot store (worker.int-spec has js NUL/surrogate and a python NUL key).
    ['python: a NUL character in a string', py('return {"s": "a\\x00b"}'), 'output is not storable: NUL character at $.s'],
    ['python: a lone surrogate', py('return ["ok", "\\ud800"]'), 'output is not storable: lone surrogate U+D800 at $[1]'],
    ['js: a lone surrogate in a key', js('return { ["\\udc00"]: 1 };'), 'output is not storable: lone surrogate U+DC00 in key at $["\\udc00"]'],
    ['HTTP: a JSON body with a NUL escape', get('/nul'), 'output is not storable: NUL character at $.name'],
    ['HTTP: a JSON body with a lone surrogate escape', get('/surrogate'), 'output is not storable: lone surrogate U+D800 at $.name'],
    ['HTTP: a text body with a NUL byte', get('/nul-text'), 'output is not storable: NUL character at $'],
    // Over the configured limit (64 KiB), in UTF-8 bytes.
    ['js: 100 KiB', js('return "x".repeat(100 * 1024);'), 'output too large: 100 KiB > 64 KiB (OUTPUT_TOO_LARGE)'],
    ['python: 22 000 euro signs (66 002 bytes of UTF-8)', py('return "\\u20ac" * 22000'), 'output too large: 64.5 KiB > 64 KiB (OUTPUT_TOO_LARGE)'],
    ['HTTP: a 100 KiB body', get('/big'), 'output too large: 100 KiB > 64 KiB (OUTPUT_TOO_LARGE)'],
    // Nested 10 000 levels deep.
    [
      'js: arrays nested 2 000 deep',
      js(deep(2_000)),
      /^output is not storable: nested deeper than 1000 levels at \$\[0\]\[0\]\[0\]\S*…\S*\[0\]\[0\] \(3001 chars\)$/,
    ],
    [
      'js: arrays nested 10 000 deep',
      js(deep(10_000)),
      'handler returned a value that is not JSON-serializable: nested too deeply (Maximum call stack size exceeded)',
    ],
    [
      'python: lists nested 10 000 deep',
      py('v = []\nfor _ in range(10000):\n    v = [v]\nreturn v'),
      /^handler returned a value that is not JSON-serializable: maximum recursion depth exceeded/,
    ],
    // Not JSON at all.
    ['js: a BigInt', js('return { n: 10n };'), 'handler returned a value that is not JSON-serializable: Do not know how to serialize a BigInt'],
    ['js: a function', js('return function () {};'), 'handler returned a value that is not JSON-serializable: a function'],
    ['js: NaN', js('return { score: 0 / 0 };'), 'handler returned a value that is not JSON-serializable: NaN at $.score is not a JSON number'],
    ['js: Infinity', js('return [1, Infinity];'), 'handler returned a value that is not JSON-serializable: Infinity at $[1] is not a JSON number'],
    [
      'js: a circular object',
      js('const o = {};\no.self = o;\nreturn o;'),
      /^handler returned a value that is not JSON-serializable: Converting circular structure to JSON/,
    ],
    [
      'python: NaN',
      py('return {"score": float("nan")}'),
      /^handler returned a value that is not JSON-serializable: Out of range float values are not JSON compliant/,
    ],
    ['python: a circular list', py('a = []\na.append(a)\nreturn a'), 'handler returned a value that is not JSON-serializable: Circular reference detected'],
    ['python: bytes', py('return b"\\x00\\xff"'), 'handler returned a value that is not JSON-serializable: Object of type bytes is not JSON serializable'],
    [
      'js: a result file overwritten with invalid JSON',
      js('require("fs").writeFileSync(process.argv[4], "{\\"ok\\": tru");\nprocess.exit(0);'),
      /^the result is not valid JSON: /,
    ],
    [
      'python: a result file overwritten with invalid JSON',
      py('import sys, os\nopen(sys.argv[3], "w").write("[1, 2")\nos._exit(0)'),
      /^the result is not valid JSON: /,
    ],
  ];

  it(`fails each attempt with an error naming the problem, and the run FAILED after its retries (${cases.length} outputs)`, async () => {
    const results = await runAll(cases.map(([, node]) => node));
    for (const [i, [what, , error]] of cases.entries()) {
      const { run, task, events } = results[i]!;
      const expected = typeof error === 'string' ? error : expect.stringMatching(error);
      expect({ what, status: run.status, task: { status: task.status, attempt: task.attempt, output: task.output, error: task.error } }).toEqual({
        what,
        status: 'FAILED',
        task: { status: 'FAILED', attempt: 1, output: null, error: expected },
      });
      expect({ what, events }).toEqual({ what, events: ['RunStarted', 'NodeFailed:0', 'NodeFailed:1'] });
      expect(run.error).toBe(`node c failed: ${task.error}`);
    }
  });

  it('stores what fits: just under the limit, and a handler that returns nothing outputs null', async () => {
    const [under, nothing, nested] = await runAll([
      js('return "x".repeat(64 * 1024 - 2);'), // 65 536 bytes with its quotes: exactly the limit
      js('return;'),
      js(deep(999)),
    ]);
    expect(under!.run.status).toBe('SUCCEEDED');
    expect((under!.task.output as string).length).toBe(LIMIT - 2);
    expect(nothing!.run.status).toBe('SUCCEEDED');
    expect(nothing!.task.output).toBeNull();
    expect(nested!.run.status).toBe('SUCCEEDED');
  });

  it('round-trips unicode byte for byte: API input → js CODE → python CODE → database and API', async () => {
    const text = [
      'emoji 😀 👩‍👩‍👧‍👦 🇫🇷 👍🏽',
      'combining e\u0301 A\u030a n\u0303 (not normalized), precomposed é',
      'right-to-left \u200fשלום\u200e مرحبا \u202eevil\u202c \u2067isolate\u2069',
      'zero-width \u200d\u200c\u200b, BOM \ufeff, NBSP \u00a0, line \u2028 paragraph \u2029, NEL \u0085',
      'CJK 漢字 かな 한국어, decomposed Hangul \u1100\u1161, Devanagari नमस्ते, astral 𝄞 𐍈 \u{10ffff}, last BMP \ufffd',
      'JSON escapes " \\ / \b \f \n \r \t \u0001 \u001f',
    ].join('\n');
    const input = { text, ['ключ 🔑 \u200f']: ['\u0301', '🏳️‍🌈'] } as JsonValue;
    const echoJs: WorkflowNode = {
      node_id: 'js',
      type: 'CODE',
      runtime: 'js',
      spec: { code: 'function handler(input) { return input.value; }', value: '{{input}}' },
    };
    const echoPy: WorkflowNode = {
      node_id: 'py',
      type: 'CODE',
      runtime: 'python',
      spec: { code: 'def handler(input):\n    return input["value"]\n', value: '{{tasks.js.output}}' },
    };
    const client = new WeftClient(platform.url!, apiKey);
    try {
      await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
        i: { workflowId: 'unicode', definition: JSON.stringify(def([echoJs, echoPy], [edge('js', 'py')], '{{tasks.py.output}}')) },
      });
      const { startRun } = await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: 'unicode', input } });
      const run = await eventually(
        'the unicode run ends',
        async () => {
          const r = (await client.request(`query($id: ID!) { run(id: $id) { status input output tasks { nodeId status output } } }`, { id: startRun.id })).run;
          return r.status !== 'RUNNING' ? r : undefined;
        },
        20_000,
        50,
      );
      expect(run.status).toBe('SUCCEEDED');
      const bytes = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
      const want = bytes(input);
      // Read back through the API…
      for (const v of [run.input, run.output, ...run.tasks.map((t: { output: unknown }) => t.output)]) expect(bytes(v).equals(want)).toBe(true);
      expect(Buffer.from(run.output.text, 'utf8').equals(Buffer.from(text, 'utf8'))).toBe(true);
      // …and straight from the database, as UTF-8 bytes of the stored text.
      const [row] = (await db.owner.query(
        `SELECT encode(convert_to(r.output->>'text', 'UTF8'), 'hex') AS run_text, encode(convert_to(t.output->>'text', 'UTF8'), 'hex') AS py_text
           FROM runs r JOIN tasks t ON t.tenant_id = r.tenant_id AND t.run_id = r.id AND t.node_id = 'py' WHERE r.id = $1`,
        [startRun.id],
      )) as { run_text: string; py_text: string }[];
      expect(row!.run_text).toBe(Buffer.from(text, 'utf8').toString('hex'));
      expect(row!.py_text).toBe(Buffer.from(text, 'utf8').toString('hex'));
    } finally {
      await client.close();
    }
  });
});
