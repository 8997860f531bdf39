import { describe, expect, it } from '@jest/globals';
import type { RunChange, TaskChange } from '@weft/engine';
import { nextLoader, patchHistoryPage, patchTaskPage, type PatchTools } from './run-patch.js';
import type { RunEventObject, RunObject, TaskObject } from './run.object.js';
import { StoredJsonLoader } from './stored-json.loader.js';

const loader = new StoredJsonLoader({} as never);
const tools: PatchTools = { tenantId: 't', loader, pageWaits: () => undefined };
const T0 = new Date('2026-01-01T00:00:00.000Z');
const AT = '2026-01-01T00:00:01.000Z';

function task(id: string, nodeId: string, status = 'COMPLETED', extra: Partial<TaskObject> = {}): TaskObject {
  return {
    tenantId: 't',
    redacted: false,
    jsonBytes: { output: 5 },
    id,
    nodeId,
    nodeType: 'HTTP',
    status: status as TaskObject['status'],
    attempt: 0,
    attemptLimit: null,
    branches: null,
    wakeAt: null,
    awaitedSignal: null,
    iteration: null,
    loopIteration: null,
    queue: 'http',
    createdAt: T0,
    updatedAt: T0,
    finishedAt: null,
    ...extra,
  };
}

function create(id: string, nodeId: string, iteration: number | null = null): TaskChange {
  return {
    op: 'create',
    id,
    nodeId,
    nodeType: 'HTTP',
    queue: 'http',
    status: 'RUNNING',
    iteration,
    input: { u: 1 },
    output: null,
    error: null,
    branches: null,
    wakeAt: null,
    awaitedSignal: null,
    finished: false,
    sensitive: false,
  };
}

function change(tasks: TaskChange[], seq = 2): RunChange {
  return { seq, at: AT, run: {}, tasks, event: { type: 'NodeCompleted', nodeId: 'a', attempt: 0, payload: {}, actions: [], ignored: null, error: null } };
}

describe('patching a page of tasks with a carried change', () => {
  it('updates the rows the change sets and appends the rows it creates, in page order', () => {
    const rows = [task('1', 'a', 'RUNNING')];
    const page = patchTaskPage(
      rows,
      10,
      ['output'],
      change([{ op: 'set', id: '1', touch: true, status: 'COMPLETED', output: { big: 'x' }, error: null, finished: true }, create('3', 'c'), create('2', 'b')]),
      tools,
    )!;
    expect(page.map((t) => `${t.nodeId}:${t.status}`)).toEqual(['a:COMPLETED', 'b:RUNNING', 'c:RUNNING']);
    expect(page[0]).toMatchObject({ updatedAt: new Date(AT), finishedAt: new Date(AT), jsonBytes: { output: 12 } }); // {"big": "x"}
    expect(page[1]).toMatchObject({ createdAt: new Date(AT), attempt: 0, jsonBytes: { output: 0 } });
    expect(rows[0]!.status).toBe('RUNNING'); // the old state is left as it was
  });

  it('gives a task resumed after its attempts ran out its granted attempt limit', () => {
    const page = patchTaskPage(
      [task('1', 'a', 'FAILED', { attempt: 2 })],
      10,
      [],
      change([{ op: 'set', id: '1', touch: true, status: 'QUEUED', attempt: 3, attemptLimit: 6, error: 'boom' }]),
      tools,
    )!;
    expect(page[0]).toMatchObject({ status: 'QUEUED', attempt: 3, attemptLimit: 6 });
  });

  it('leaves a full page without rows past its end, and gives up on an order a collation decides', () => {
    const full = [task('1', 'a'), task('2', 'b')];
    expect(patchTaskPage(full, 2, [], change([create('3', 'c')]), tools)!.map((t) => t.id)).toEqual(['1', '2']);
    expect(patchTaskPage([], 10, [], change([create('3', 'node_x'), create('4', 'node_y')]), tools)).toBeUndefined();
    expect(patchTaskPage([task('1', 'a')], 10, [], change([{ op: 'set', id: 'missing', touch: true, status: 'FAILED' }]), tools)).toBeUndefined();
  });

  it('puts iterations after their aggregate and cancels the active tasks only', () => {
    const page = patchTaskPage(
      [task('1', 'a', 'WAITING'), task('2', 'b')],
      10,
      [],
      change([create('9', 'each', 1), create('8', 'each', 0), create('7', 'each'), { op: 'cancelActive', reason: 'stop' }]),
      tools,
    )!;
    expect(page.map((t) => `${t.nodeId}${t.iteration ?? ''}:${t.status}`)).toEqual([
      'a:CANCELLED',
      'b:COMPLETED',
      'each:CANCELLED',
      'each0:CANCELLED',
      'each1:CANCELLED',
    ]);
  });
});

describe('patching a page of history', () => {
  const run = { tenantId: 't', id: 'r' } as RunObject;
  const event = (seq: number) => ({ tenantId: 't', runId: 'r', seq, type: 'X', at: T0, nodeId: null, attempt: null, ignored: null }) as RunEventObject;

  it('appends the event once, and not past the page', () => {
    expect(patchHistoryPage([event(1)], 10, 0, undefined, run, change([], 2), loader).map((e) => e.seq)).toEqual([1, 2]);
    expect(patchHistoryPage([event(1), event(2)], 10, 0, undefined, run, change([], 2), loader).map((e) => e.seq)).toEqual([1, 2]);
    expect(patchHistoryPage([event(1)], 1, 0, undefined, run, change([], 2), loader).map((e) => e.seq)).toEqual([1]);
  });
});

describe('the stored values a patched state keeps', () => {
  const run = { tenantId: 't', id: 'r' } as RunObject;
  const completed = (seq: number): RunChange => change([{ op: 'set', id: '1', touch: true, output: { seq } }], seq);

  it('holds a bounded number of values however many changes a run watched without its history takes', () => {
    let next = new StoredJsonLoader({} as never);
    for (let seq = 2; seq < 200; seq++) next = nextLoader(next, run, completed(seq), new Set());
    expect(next.size).toBe(1); // the task's output
  });

  it("keeps the values of the events on the pages of history held, and carries the change's event for them", async () => {
    let next = new StoredJsonLoader({} as never);
    for (let seq = 2; seq < 10; seq++) next = nextLoader(next, run, completed(seq), new Set([2, 3, seq]));
    expect(next.size).toBe(1 + 3 * 3); // the output; payload, actions and error of events 2, 3 and 9
    const ref = { table: 'run_events', tenantId: 't', runId: 'r', seq: 3, column: 'payload' } as const;
    await expect(next.load(ref, { busy: false, whenSized: (then: () => void) => then() })).resolves.toEqual({});
  });

  it('answers a value it carries or kept as it is, not as a promise', async () => {
    const gate = { busy: false, whenSized: (then: () => void) => then() };
    const output = { table: 'tasks', tenantId: 't', id: '1', column: 'output' } as const;
    const first = nextLoader(new StoredJsonLoader({} as never), run, completed(2), new Set());
    expect(first.loadNow(output, gate)).toEqual({ seq: 2 });
    const next = nextLoader(first, run, change([], 3), new Set());
    expect(next.loadNow(output, gate)).toEqual({ seq: 2 });
    expect(next.loadNow(output, { ...gate, refused: true })).toBeNull();
  });
});
