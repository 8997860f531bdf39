import { afterEach, describe, expect, it } from '@jest/globals';
import { WeftError } from '@weft/engine';
import { CHECK_DEADLINE_MS, DefinitionChecker, INLINE_MAX_SOURCE, MAX_THREAD_REQUESTS, MAX_THREAD_REQUESTS_PER_TENANT } from './definition-checker.js';

/** A valid one-node definition whose text is over the inline limit (a long YAML comment). */
const LARGE = `# ${'x'.repeat(INLINE_MAX_SOURCE)}\nnodes:\n  - node_id: a\n    type: WAIT\n    spec: {duration_seconds: 1}\n`;

describe('DefinitionChecker', () => {
  let checker: DefinitionChecker;
  afterEach(() => checker.onModuleDestroy());

  it('parses and validates a large definition on its thread, as inline, and refuses requests past its bound', async () => {
    const counted: string[] = [];
    checker = new DefinitionChecker({ maxDefinitionNodes: 3, maxDefinitionEdges: 3 }, {
      definitionChecks: { inc: (l: { how: string }) => counted.push(l.how) },
    } as never);
    const inline = await checker.parse(LARGE.slice(LARGE.indexOf('\n') + 1));
    const batch = Array.from({ length: MAX_THREAD_REQUESTS + 1 }, () =>
      checker.parse(LARGE).then(
        (p) => p,
        (e: unknown) => e,
      ),
    );
    const answers = await Promise.all(batch);
    for (const a of answers.slice(0, MAX_THREAD_REQUESTS)) expect(a).toEqual(inline);
    const busy = answers.at(-1) as WeftError;
    expect(busy).toBeInstanceOf(WeftError);
    expect(busy.code).toBe('TRANSIENT');
    expect(busy.message).toBe(`the API is already checking ${MAX_THREAD_REQUESTS} large definitions; publish again shortly`);

    expect(await checker.validate(inline, LARGE.length)).toEqual([]);
    expect(counted).toEqual(['thread']);
    // The thread's refusals arrive as the engine's errors.
    const over = `${LARGE}  - {node_id: b, type: FORK}\n  - {node_id: c, type: FORK}\n  - {node_id: d, type: FORK}\n`;
    await expect(checker.parse(over)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'definition has 4 nodes; at most 3 are allowed (WEFT_MAX_DEFINITION_NODES)',
    });
  });

  it("keeps a share of the thread's requests for other tenants than the one publishing most", async () => {
    checker = new DefinitionChecker({ maxDefinitionNodes: 3, maxDefinitionEdges: 3 });
    const settle = (p: Promise<unknown>) =>
      p.then(
        (v) => v,
        (e: unknown) => e,
      );
    const busy = Array.from({ length: MAX_THREAD_REQUESTS_PER_TENANT + 1 }, () => settle(checker.parse(LARGE, 'tenant-a')));
    const other = settle(checker.parse(LARGE, 'tenant-b'));
    const answers = await Promise.all(busy);
    for (const a of answers.slice(0, MAX_THREAD_REQUESTS_PER_TENANT)) expect(a).not.toBeInstanceOf(Error);
    expect(answers.at(-1)).toMatchObject({
      code: 'TRANSIENT',
      message: `the API is already checking ${MAX_THREAD_REQUESTS_PER_TENANT} large definitions of this tenant, its most at once; publish again once they are answered`,
    });
    expect(await other).not.toBeInstanceOf(Error);
    // Answered requests no longer count: the tenant may publish again.
    expect(await settle(checker.parse(LARGE, 'tenant-a'))).not.toBeInstanceOf(Error);
  });

  it('refuses a definition that holds the thread past its deadline, and answers the next on a new thread', async () => {
    checker = new DefinitionChecker({ maxDefinitionNodes: 3, maxDefinitionEdges: 3 });
    expect(checker.deadlineMs).toBe(CHECK_DEADLINE_MS);
    // Started and warmed with the normal deadline: the thread's start is not what is timed out.
    await checker.parse(LARGE, 'tenant-a');
    checker.deadlineMs = 200;
    // An ordered map of YAML 1.1 checks its keys pairwise: 40,000 of them take many seconds.
    const omap = `%YAML 1.1\n---\nnodes: []\nx: !!omap\n${Array.from({ length: 40_000 }, (_, i) => `  - k${i}: 1\n`).join('')}`;
    await expect(checker.parse(omap, 'tenant-a')).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'the definition took over 0.2 s to check, the most one may take; make it smaller or simpler',
    });
    checker.deadlineMs = CHECK_DEADLINE_MS;
    expect(await checker.parse(LARGE, 'tenant-b')).toMatchObject({ definition: { nodes: [{ node_id: 'a' }] } });
  });

  it('refuses JSON text over the node cap from a JSON reading, before the YAML parser reads it', async () => {
    checker = new DefinitionChecker({ maxDefinitionNodes: 3, maxDefinitionEdges: 3 });
    // The repeated "edges" key would be the YAML parser's first complaint.
    const json = `{"nodes":[${Array.from({ length: 4 }, () => '{}').join(',')}],"edges":[],"edges":[]}`;
    await expect(checker.parse(json)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'definition has 4 nodes; at most 3 are allowed (WEFT_MAX_DEFINITION_NODES)',
    });
    // Within the caps, the same text is read as YAML, which refuses the duplicate key.
    await expect(checker.parse(json.replace(/\{\},/g, ''))).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(checker.parse(json.replace(/\{\},/g, ''))).rejects.not.toMatchObject({ message: expect.stringContaining('WEFT_MAX_DEFINITION_NODES') });
  });
});
