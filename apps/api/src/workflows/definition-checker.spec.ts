import { afterEach, describe, expect, it } from '@jest/globals';
import { WeftError } from '@weft/engine';
import { DefinitionChecker, INLINE_MAX_SOURCE, MAX_THREAD_REQUESTS } from './definition-checker.js';

/** A valid one-node definition whose text is over the inline limit (a long YAML comment). */
const LARGE = `# ${'x'.repeat(INLINE_MAX_SOURCE)}\nnodes:\n  - node_id: a\n    type: WAIT\n    spec: {duration_seconds: 1}\n`;

describe('DefinitionChecker', () => {
  let checker: DefinitionChecker;
  afterEach(() => checker.onModuleDestroy());

  it('parses and validates a large definition on its thread, as inline, and refuses requests past its bound', async () => {
    const counted: string[] = [];
    checker = new DefinitionChecker({ maxDefinitionNodes: 3, maxDefinitionEdges: 3 }, { definitionChecks: { inc: (l: { how: string }) => counted.push(l.how) } } as never);
    const inline = await checker.parse(LARGE.slice(LARGE.indexOf('\n') + 1));
    const batch = Array.from({ length: MAX_THREAD_REQUESTS + 1 }, () => checker.parse(LARGE).then((p) => p, (e: unknown) => e));
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
    await expect(checker.parse(over)).rejects.toMatchObject({ code: 'BAD_USER_INPUT', message: 'definition has 4 nodes; at most 3 are allowed (WEFT_MAX_DEFINITION_NODES)' });
  });
});
