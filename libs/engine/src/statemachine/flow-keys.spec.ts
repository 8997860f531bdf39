import { describe, expect, it } from '@jest/globals';
import { TaskStatus } from '../model/workflow-types.js';
import { CelTemplateResolver } from '../template/resolver.js';
import { runConcurrencyKey } from './flow-keys.js';
import { actionsOf, created, edge, forEach, Harness, task } from './testing/harness.js';

const resolver = new CelTemplateResolver();

/** The run key of a definition whose `concurrency.key` is `key`, for `input` and `config`. */
function runKey(key: string | undefined, input: unknown = {}, config: unknown = {}): ReturnType<typeof runConcurrencyKey> {
  return runConcurrencyKey({ concurrency: { limit: 1, ...(key !== undefined ? { key } : {}) } }, input as never, config as never, resolver);
}

describe('runConcurrencyKey: the group of a run, when it starts', () => {
  it('resolves a template over input and config to a string', () => {
    expect(runKey('acct-{{ input.account }}@{{ config.region }}', { account: 'a-1' }, { region: 'eu' })).toEqual({ key: 'acct-a-1@eu' });
    expect(runKey('{{ input.account }}', { account: 'a-1' })).toEqual({ key: 'a-1' });
    expect(runKey('billing')).toEqual({ key: 'billing' });
  });

  it('is the empty string without a key, or without concurrency', () => {
    expect(runKey(undefined)).toEqual({ key: '' });
    expect(runConcurrencyKey({}, {}, {}, resolver)).toEqual({ key: '' });
  });

  it('turns a number into its text', () => {
    expect(runKey('{{ input.n }}', { n: 42 })).toEqual({ key: '42' });
    expect(runKey('{{ input.n }}', { n: 1.5 })).toEqual({ key: '1.5' });
    expect(runKey('{{ 7 }}')).toEqual({ key: '7' });
  });

  it('refuses a boolean, null, a list or an object, saying what it resolved to', () => {
    expect(runKey('{{ input.v }}', { v: [1, 2] })).toEqual({ error: 'concurrency.key resolved to a list; it must be a string or a number' });
    expect(runKey('{{ input.v }}', { v: { a: 1 } })).toEqual({ error: 'concurrency.key resolved to an object; it must be a string or a number' });
    expect(runKey('{{ input.v }}', { v: true })).toEqual({ error: 'concurrency.key resolved to a boolean; it must be a string or a number' });
    expect(runKey('{{ input.v }}', { v: null })).toEqual({ error: 'concurrency.key resolved to null; it must be a string or a number' });
  });

  it('accepts 256 characters and refuses 257, counting code points', () => {
    expect(runKey('{{ input.v }}', { v: 'k'.repeat(256) })).toEqual({ key: 'k'.repeat(256) });
    expect(runKey('{{ input.v }}', { v: 'k'.repeat(257) })).toEqual({ error: 'concurrency.key is 257 characters; at most 256' });
    expect(runKey('{{ input.v }}', { v: '😀'.repeat(256) })).toEqual({ key: '😀'.repeat(256) });
    expect(runKey('x{{ input.v }}', { v: 'k'.repeat(299) })).toEqual({ error: 'concurrency.key is 300 characters; at most 256' });
  });

  it('names the key when the template cannot be evaluated, or gives what the database refuses', () => {
    expect(runKey('{{ input.region }}', {})).toEqual({ error: expect.stringMatching(/^concurrency\.key: cannot evaluate \{\{ input\.region \}\}: /) });
    expect(runKey('{{ input.v }}', { v: 'a\u0000b' })).toEqual({ error: 'concurrency.key is not storable: NUL character' });
  });
});

describe('node flow keys, resolved when the node is activated', () => {
  it('dispatches a node without limits with no flow field at all', async () => {
    const h = new Harness([task('a', { url: 'https://x' }), task('b')], [edge('a', 'b')]);
    const [d] = actionsOf(await h.start(), 'DispatchTask');
    expect(d).toBeDefined();
    expect('flow' in d!).toBe(false);
  });

  it('carries the resolved keys and limits on attempt 0, in the scope of the spec', async () => {
    const h = new Harness(
      [
        task('fetch'),
        task(
          'charge',
          { url: 'https://pay/{{ input.account }}' },
          {
            concurrency: { key: '{{ input.account }}-{{ tasks.fetch.output.psp }}', limit: 2 },
            rate_limit: { key: '{{ tasks.fetch.output.n }}', limit: 100, per_seconds: 60 },
          },
        ),
      ],
      [edge('fetch', 'charge')],
      { input: { account: 'acme' } },
    );
    await h.start();
    const [d] = actionsOf(await h.complete('fetch', { psp: 'stripe', n: 7 }), 'DispatchTask');
    expect(d?.attempt).toBe(0);
    expect(d?.flow).toEqual({ concurrency: { key: 'acme-stripe', limit: 2 }, rate: { key: '7', limit: 100, perSeconds: 60 } });
  });

  it('loads the outputs a key reads, when the spec reads none', async () => {
    const h = new Harness(
      [task('fetch'), task('mid'), task('charge', { url: 'https://x' }, { concurrency: { key: '{{ tasks.fetch.output.psp }}', limit: 1 } })],
      [edge('fetch', 'mid'), edge('mid', 'charge')],
    );
    await h.start();
    await h.complete('fetch', { psp: 'adyen' });
    const [d] = actionsOf(await h.complete('mid'), 'DispatchTask');
    expect(d?.flow).toEqual({ concurrency: { key: 'adyen', limit: 1 } });
  });

  it('gives a null key when the node has none, for the coordinator to fill', async () => {
    const h = new Harness([task('a', {}, { concurrency: { limit: 3 }, rate_limit: { limit: 5, per_seconds: 1 } })], []);
    const [d] = actionsOf(await h.start(), 'DispatchTask');
    expect(d?.flow).toEqual({ concurrency: { key: null, limit: 3 }, rate: { key: null, limit: 5, perSeconds: 1 } });
  });

  it('does not carry the flow on a retry', async () => {
    const h = new Harness([task('a', {}, { concurrency: { key: 'k', limit: 1 }, retry: { max_attempts: 2 } })], []);
    await h.start();
    const tr = await h.fail('a');
    expect(actionsOf(tr, 'RetryTask')).toHaveLength(1);
    expect(actionsOf(tr, 'DispatchTask')).toEqual([]);
  });

  it('fails only the node whose key resolves badly, naming the key, and routes the rest on', async () => {
    const h = new Harness(
      [
        task('start'),
        task('bad', {}, { concurrency: { key: '{{ input.tags }}', limit: 1 } }),
        task('good', {}, { rate_limit: { key: '{{ input.missing }}x', limit: 1, per_seconds: 1 } }),
        task('fine'),
      ],
      [edge('start', 'bad'), edge('start', 'good'), edge('start', 'fine')],
      { input: { tags: ['a', 'b'] } },
    );
    await h.start();
    const tr = await h.complete('start');
    expect(created(tr, TaskStatus.Failed)).toEqual(['bad', 'good']);
    expect(h.tasks.get('bad')?.error).toBe('concurrency.key of node bad resolved to a list; it must be a string or a number');
    expect(h.tasks.get('good')?.error).toMatch(/^rate_limit\.key of node good: cannot evaluate \{\{ input\.missing \}\}: /);
    expect(actionsOf(tr, 'DispatchTask').map((d) => d.node.node_id)).toEqual(['fine']);
  });

  it('fails a node whose key is longer than 256 characters', async () => {
    const h = new Harness([task('a', {}, { concurrency: { key: '{{ input.k }}', limit: 1 } })], [], { input: { k: 'x'.repeat(257) } });
    await h.start();
    expect(h.node('a').status).toBe(TaskStatus.Failed);
    expect(h.tasks.get('a')?.error).toBe('concurrency.key of node a is 257 characters; at most 256');
  });
});

describe('for_each flow keys: one per iteration, with its element', () => {
  const fan = (key: string, items: unknown): Harness =>
    new Harness(
      [
        forEach(
          'call',
          '{{ input.items }}',
          { url: 'https://x/{{ acct.id }}' },
          { as: 'acct', max_concurrency: 1, concurrency: { key, limit: 1 }, rate_limit: { limit: 9, per_seconds: 3 } },
        ),
      ],
      [],
      { input: { items: items as never } },
    );

  it('gives each iteration its own key, resolved with its element, index and count', async () => {
    const h = fan('{{ acct.id }}-{{ acctIndex }}/{{ acctCount }}', [{ id: 'a' }, { id: 'b' }, { id: 7 }]);
    const [ci] = actionsOf(await h.start(), 'CreateIterations');
    expect(ci?.iterations.map((it) => it.flow)).toEqual([
      { concurrency: { key: 'a-0/3', limit: 1 }, rate: { key: null, limit: 9, perSeconds: 3 } },
      { concurrency: { key: 'b-1/3', limit: 1 }, rate: { key: null, limit: 9, perSeconds: 3 } },
      { concurrency: { key: '7-2/3', limit: 1 }, rate: { key: null, limit: 9, perSeconds: 3 } },
    ]);
  });

  it('keeps the number type of a single-template key as text', async () => {
    const h = fan('{{ acct.id }}', [{ id: 7 }, { id: 'x' }]);
    const [ci] = actionsOf(await h.start(), 'CreateIterations');
    expect(ci?.iterations.map((it) => it.flow?.concurrency?.key)).toEqual(['7', 'x']);
  });

  it('fails the node, as an iteration spec error does, naming the iteration and the key', async () => {
    const h = fan('{{ acct.id }}', [{ id: 'a' }, { id: ['nested'] }]);
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateIterations')).toEqual([]);
    expect(h.node('call').status).toBe(TaskStatus.Failed);
    expect(h.tasks.get('call')?.error).toBe(
      'for_each of node call: iteration 1: concurrency.key of node call resolved to a list; it must be a string or a number',
    );
  });

  it('gives iterations no flow when the node has no limits', async () => {
    const h = new Harness([forEach('call', '{{ input.items }}', {})], [], { input: { items: [1, 2] } });
    const [ci] = actionsOf(await h.start(), 'CreateIterations');
    expect(ci?.iterations.every((it) => !('flow' in it))).toBe(true);
  });
});
