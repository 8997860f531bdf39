import { describe, expect, it } from '@jest/globals';
import { DagCache } from './dag-cache.js';
import type { WorkflowDefinition } from '../index.js';

const defn = (id: string): WorkflowDefinition => ({ nodes: [{ node_id: id, type: 'HTTP', spec: {} }], edges: [] });

describe('DagCache', () => {
  it('builds once per version and evicts the least recently used', async () => {
    const cache = new DagCache(2);
    const loads: string[] = [];
    const get = (v: number) =>
      cache.get('t', 'w', v, async () => {
        loads.push(`v${v}`);
        return defn(`n${v}`);
      });
    const first = await get(1);
    expect(await get(1)).toBe(first);
    await get(2);
    await get(1); // 1 is now the most recently used
    await get(3); // evicts 2
    expect(cache.size).toBe(2);
    await get(1);
    await get(2);
    expect(loads).toEqual(['v1', 'v2', 'v3', 'v2']);
    expect(first?.getNode('n1')?.type).toBe('HTTP');
  });

  it('caches nothing for a missing version', async () => {
    const cache = new DagCache();
    expect(await cache.get('t', 'w', 9, async () => undefined)).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});
