import { describe, expect, it } from '@jest/globals';
import { WeftApiError } from '@weft/client';
import { runStatusTable, runStatusView, type RunStatusRun } from './run-view.js';
import { runsTable, type ListedRun } from './run-read-commands.js';
import { startedLine } from './run-control-commands.js';
import { RUN_PAGE } from './run-pages.js';
import { watchRun } from './run-watch.js';
import { problemLines } from './problem-lines.js';
import { validateSource } from './validate-command.js';
import { asValidateReports } from './workflow-commands.js';

const RATE = 'rate limit "partner" 1 per 60 s, next start 12:00:00.000Z';

/** An iteration task of node `each`. */
function iteration(i: number, status: string, waitReason: string | null = null, waitDetail: string | null = null) {
  return { id: `t${i}`, nodeId: 'each', nodeType: 'HTTP', status, attempt: 0, error: null, awaitedSignal: null, iteration: i, waitReason, waitDetail };
}

/** The aggregate task of node `each` (a for_each node). */
const aggregate = {
  id: 'agg',
  nodeId: 'each',
  nodeType: 'HTTP',
  status: 'RUNNING',
  attempt: 0,
  error: null,
  awaitedSignal: null,
  iteration: null,
  waitReason: null,
  waitDetail: null,
};

/** What `fn` writes on stdout. */
async function stdoutOf(fn: () => Promise<unknown>): Promise<string> {
  let out = '';
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  try {
    await fn();
  } finally {
    process.stdout.write = write;
  }
  return out;
}

describe('run-status of a for_each node with held iterations', () => {
  const tasks = [
    aggregate,
    iteration(0, 'COMPLETED'),
    iteration(1, 'RUNNING'),
    ...[2, 3, 4, 5, 6, 7, 8].map((i) => iteration(i, 'QUEUED', 'RATE_LIMIT', RATE)),
    iteration(9, 'PENDING'),
  ];
  const run = {
    id: 'r1',
    workflowId: 'fan',
    version: 1,
    status: 'RUNNING',
    priority: 3,
    concurrencyKey: null,
    createdAt: '2030-01-01T00:00:00Z',
    finishedAt: null,
    tasks,
    children: [],
  };

  it('lists the held iterations under the node with why each waits, the first five then how many more', () => {
    const out = runStatusTable(runStatusView(structuredClone(run) as unknown as RunStatusRun, null), undefined, Date.parse('2030-01-01T00:00:05Z'));
    const lines = out.split('\n');
    const at = lines.findIndex((l) => /^each\s+RUNNING/.test(l));
    expect(lines[at]).toMatch(/^each\s+RUNNING\s+-\s+×10: 1 completed, 1 running, 7 queued, 1 pending$/);
    expect(lines.slice(at + 1, at + 7).map((l) => l.replace(/\s+/g, ' '))).toEqual([
      ...[2, 3, 4, 5, 6].map((i) => ` each[${i}] QUEUED 1 RATE_LIMIT: ${RATE}`),
      ' … and 2 more held (-o json lists every iteration)',
    ]);
    expect(lines[at + 1]).toMatch(/^ {2}each\[2\]/);
  });

  it('puts every iteration task with why it waits in -o json', () => {
    const view: any = runStatusView(structuredClone(run) as unknown as RunStatusRun, null);
    expect(view.tasks).toHaveLength(1);
    expect(view.tasks[0].iterationTasks).toHaveLength(10);
    expect(view.tasks[0].iterationTasks[4]).toEqual({
      id: 't4',
      status: 'QUEUED',
      attempt: 0,
      error: null,
      awaitedSignal: null,
      iteration: 4,
      waitReason: 'RATE_LIMIT',
      waitDetail: RATE,
    });
  });

  it('says a QUEUED run is queued for the time since it was created, and why', () => {
    const queued = {
      ...run,
      status: 'QUEUED',
      concurrencyKey: 'acme',
      tasks: [],
      waitReason: 'CONCURRENCY_LIMIT',
      waitDetail: 'concurrency limit 2 reached for key "acme" (2 active, 1 queued)',
    };
    const out = runStatusTable(runStatusView(queued as unknown as RunStatusRun, null), undefined, Date.parse('2030-01-01T00:01:05Z'));
    expect(out).toContain('finished         - (queued for 1m05s)\n');
    expect(out).not.toContain('running for');
    expect(out).toContain('waiting          CONCURRENCY_LIMIT: concurrency limit 2 reached for key "acme" (2 active, 1 queued)\n');
  });
});

describe('runs with flow control', () => {
  it('shows each run’s priority, and why a QUEUED one waits', () => {
    const runs = [
      {
        id: 'r2',
        workflowId: 'orders',
        version: 1,
        status: 'QUEUED',
        priority: 1,
        concurrencyKey: 'acme',
        waitReason: 'CONCURRENCY_LIMIT',
        waitDetail: 'concurrency limit 2 reached for key "acme" (2 active, 1 queued)',
        createdAt: '2030-01-01T00:00:00Z',
        finishedAt: null,
      },
      {
        id: 'r1',
        workflowId: 'orders',
        version: 1,
        status: 'SUCCEEDED',
        priority: 3,
        concurrencyKey: 'acme',
        waitReason: null,
        waitDetail: null,
        createdAt: '2030-01-01T00:00:00Z',
        finishedAt: '2030-01-01T00:00:02Z',
      },
    ];
    const lines = runsTable(runs as unknown as ListedRun[], Date.parse('2030-01-01T00:00:09Z'))
      .trimEnd()
      .split('\n')
      .map((l) => l.replace(/\s{2,}/g, ' | '));
    expect(lines).toEqual([
      'ID | WORKFLOW | VERSION | STATUS | PRIORITY | CREATED | DURATION | WAITING',
      'r2 | orders | 1 | QUEUED | 1 | 2030-01-01T00:00:00Z | 9s | CONCURRENCY_LIMIT: concurrency limit 2 reached for key "acme" (2 active, 1 queued)',
      'r1 | orders | 1 | SUCCEEDED | 3 | 2030-01-01T00:00:00Z | 2s',
    ]);
  });
});

describe('weft run of a run that does not start at once', () => {
  it('prints the reason of a run cancelled at once, and why a QUEUED run waits', () => {
    expect(startedLine({ id: 'r1', status: 'CANCELLED', error: 'concurrency limit 2 reached for key "acme" (cancel_newest)' })).toBe(
      'run r1 CANCELLED: concurrency limit 2 reached for key "acme" (cancel_newest)\n',
    );
    expect(
      startedLine({
        id: 'r2',
        status: 'QUEUED',
        error: null,
        waitReason: 'CONCURRENCY_LIMIT',
        waitDetail: 'concurrency limit 2 reached for key "acme" (2 active, 1 queued)',
      }),
    ).toBe('run r2 QUEUED (CONCURRENCY_LIMIT: concurrency limit 2 reached for key "acme" (2 active, 1 queued))\n');
    expect(startedLine({ id: 'r3', status: 'RUNNING', error: null, waitReason: null, waitDetail: null })).toBe('run r3 RUNNING\n');
  });
});

describe('watch of a for_each node', () => {
  /** A client whose subscription sends `updates`, and whose requests answer the pages after a task id from `pages`. */
  function fakeClient(updates: unknown[], pages: Map<string, unknown[]> = new Map()) {
    const asked: string[] = [];
    return {
      asked,
      subscribe: (_q: string, _v: unknown, next: (data: unknown) => boolean) => {
        for (const u of updates) if (!next({ runUpdated: u })) break;
        return { done: Promise.resolve(), dispose: () => undefined };
      },
      request: async (_q: string, v: { after: string }) => {
        asked.push(v.after);
        return { run: { tasks: pages.get(v.after) ?? [] } };
      },
    };
  }

  it('refreshes the counts on each update and prints held iterations, a few per update', async () => {
    const updates = [
      { status: 'RUNNING', tasks: [aggregate, iteration(0, 'PENDING'), iteration(1, 'PENDING')] },
      { status: 'RUNNING', tasks: [aggregate, iteration(0, 'RUNNING'), iteration(1, 'QUEUED', 'RATE_LIMIT', RATE)] },
      { status: 'RUNNING', tasks: [aggregate, iteration(0, 'COMPLETED'), iteration(1, 'QUEUED', 'RATE_LIMIT', RATE)] },
      {
        status: 'RUNNING',
        tasks: [
          aggregate,
          iteration(0, 'COMPLETED'),
          iteration(1, 'COMPLETED'),
          ...[2, 3, 4, 5, 6, 7, 8].map((i) => iteration(i, 'QUEUED', 'RATE_LIMIT', RATE)),
        ],
      },
      { status: 'SUCCEEDED', tasks: [{ ...aggregate, status: 'COMPLETED' }, iteration(0, 'COMPLETED'), iteration(1, 'COMPLETED')] },
    ];
    const out = await stdoutOf(() => watchRun(fakeClient(updates) as never, 'r1'));
    expect(out.split('\n')).toEqual([
      'each: RUNNING (×2: 2 pending)',
      'each: RUNNING (×2: 1 running, 1 queued)',
      `each[1]: QUEUED (RATE_LIMIT: ${RATE})`,
      'each: RUNNING (×2: 1 completed, 1 queued)',
      'each: RUNNING (×9: 2 completed, 7 queued)',
      ...[2, 3, 4, 5, 6].map((i) => `each[${i}]: QUEUED (RATE_LIMIT: ${RATE})`),
      'each: … and 2 more iterations held',
      'each: COMPLETED (×2: 2 completed)',
      '',
    ]);
  });

  it('reads the rest of the tasks of an update whose first page is full, so the counts cover every iteration', async () => {
    const first = [aggregate, ...Array.from({ length: RUN_PAGE - 1 }, (_, i) => iteration(i, 'COMPLETED'))];
    const second = Array.from({ length: RUN_PAGE }, (_, i) => iteration(RUN_PAGE - 1 + i, 'PENDING'));
    const third = [iteration(2 * RUN_PAGE - 1, 'PENDING'), { ...aggregate, id: 'other', nodeId: 'after', status: 'PENDING' }];
    const client = fakeClient(
      [
        { status: 'RUNNING', tasks: first },
        { status: 'FAILED', tasks: [{ ...aggregate, status: 'FAILED' }] },
      ],
      new Map([
        [first.at(-1)!.id, second],
        [second.at(-1)!.id, third],
      ]),
    );
    const out = await stdoutOf(() => watchRun(client as never, 'r1'));
    expect(client.asked).toEqual([first.at(-1)!.id, second.at(-1)!.id]);
    expect(out.split('\n')).toEqual([
      `each: RUNNING (×${2 * RUN_PAGE}: ${RUN_PAGE - 1} completed, ${RUN_PAGE + 1} pending)`,
      'after: PENDING',
      'each: FAILED',
      '',
    ]);
  });
});

describe('weft apply refused for its definition', () => {
  it('words the problems as weft validate does', async () => {
    const source =
      'concurrency: {key: {{ input.customer }}, limit: 1}\nnodes:\n  - {node_id: a, type: HTTP, spec: {url: "https://x"}, rate_limit: {key: {{ input.x }}, limit: 1, per_seconds: 1}}\n';
    const validated = await validateSource('w.yaml', source);
    expect(validated.valid).toBe(false);
    // The API's refusal carries the same problems (the same engine), the node id as extensions give it.
    const refusal = new WeftApiError([
      { message: `invalid workflow definition: ${validated.problems.length} problem(s)`, extensions: { code: 'BAD_USER_INPUT', problems: validated.problems } },
    ]);
    const reported = asValidateReports(refusal) as Error;
    expect(reported.message.split('\n')).toEqual([
      `BAD_USER_INPUT: invalid workflow definition: 2 problem(s)`,
      ...problemLines(validated.problems).trimEnd().split('\n'),
    ]);
    expect(reported.message).toContain(
      '  - nodes[0].rate_limit.key (node a): rate_limit.key must be a string; YAML read the unquoted template {{ input.x }} as a map: quote it, key: "{{ input.x }}"',
    );
    expect(reported.message).toContain('  - concurrency.key: concurrency.key must be a string;');
    const other = new WeftApiError([{ message: 'not allowed', extensions: { code: 'FORBIDDEN' } }]);
    expect(asValidateReports(other)).toBe(other);
  });
});
