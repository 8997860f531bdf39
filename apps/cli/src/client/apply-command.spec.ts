import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { cli } from '../../../../test/support/weft-cli.js';
import { applyOrder, calledWorkflows, definitionTargets, workflowIdOf } from './apply-command.js';
import { definitionText } from './workflow-get-command.js';

describe('the workflow id apply gives a file', () => {
  it('is --id, else the definition workflow_id, else the file name without its extension', () => {
    expect(workflowIdOf('defs/order-flow.yaml', 'workflow_id: orders\nnodes: []\n', 'given')).toBe('given');
    expect(workflowIdOf('defs/order-flow.yaml', 'workflow_id: orders\nnodes: []\n', undefined)).toBe('orders');
    expect(workflowIdOf('defs/order-flow.json', '{"workflow_id": "orders", "nodes": []}', undefined)).toBe('orders');
    expect(workflowIdOf('defs/order-flow.v2.yml', 'nodes: []\n', undefined)).toBe('order-flow.v2');
    expect(workflowIdOf('-', 'workflow_id: piped\n', undefined)).toBe('piped');
    expect(workflowIdOf('-', 'nodes: []\n', undefined)).toBeUndefined();
  });

  it('falls back to the file name for a workflow_id that is not a string, and for text that does not parse, without a warning', () => {
    const warn = jest.spyOn(process, 'emitWarning');
    try {
      expect(workflowIdOf('a.yaml', 'workflow_id: {x: 1}\n', undefined)).toBe('a');
      expect(workflowIdOf('a.yaml', 'nodes:\n  - {node_id: a\n', undefined)).toBe('a');
      expect(workflowIdOf('a.yaml', '- just\n- a list\n', undefined)).toBe('a');
      expect(workflowIdOf('a.yaml', 'concurrency: {key: {{ input.customer }}, limit: 1}\n', undefined)).toBe('a');
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});

describe('the files apply -f takes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-apply-'));
    await mkdir(join(dir, 'defs/b-sub'), { recursive: true });
    await mkdir(join(dir, 'empty/deeper'), { recursive: true });
    for (const f of ['defs/c.yaml', 'defs/a.JSON', 'defs/b.yml', 'defs/readme.md', 'defs/b-sub/x.yaml', 'empty/deeper/y.yaml', 'single.txt'])
      await writeFile(join(dir, f), '');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("takes a folder's definitions sorted by name, its subfolders only with recursive", async () => {
    const d = (f: string) => ({ path: join(dir, f) });
    expect(await definitionTargets([join(dir, 'defs')], false)).toEqual([d('defs/a.JSON'), d('defs/b.yml'), d('defs/c.yaml')]);
    expect(await definitionTargets([join(dir, 'defs')], true)).toEqual([d('defs/a.JSON'), d('defs/b-sub/x.yaml'), d('defs/b.yml'), d('defs/c.yaml')]);
  });

  it('keeps the order of the paths given, a file whatever its extension, stdin, and an error for each path it cannot use', async () => {
    const missing = join(dir, 'missing.yaml');
    expect(await definitionTargets([join(dir, 'single.txt'), missing, '-', join(dir, 'empty'), join(dir, 'defs/c.yaml')], false)).toEqual([
      { path: join(dir, 'single.txt') },
      { path: missing, error: `cannot read ${missing}: no such file` },
      { path: '-' },
      { path: join(dir, 'empty'), error: `no *.yaml, *.yml, *.json file in folder ${join(dir, 'empty')} (-R to look in its subfolders)` },
      { path: join(dir, 'defs/c.yaml') },
    ]);
    expect(await definitionTargets([join(dir, 'empty')], true)).toEqual([{ path: join(dir, 'empty/deeper/y.yaml') }]);
  });

  it('names a definition link that loops or leads nowhere as an error, and follows no folder link (no loop)', async () => {
    const links = join(dir, 'links');
    await mkdir(links);
    await writeFile(join(links, 'good.yaml'), '');
    await symlink('loop.yaml', join(links, 'loop.yaml'));
    await symlink('missing.yaml', join(links, 'dangling.yaml'));
    await symlink('good.yaml', join(links, 'alias.yml'));
    await symlink('.', join(links, 'self'));
    const at = (f: string) => join(links, f);
    expect(await definitionTargets([links], true)).toEqual([
      { path: at('alias.yml') },
      { path: at('dangling.yaml'), error: `cannot read ${at('dangling.yaml')}: a link to a file that does not exist` },
      { path: at('good.yaml') },
      { path: at('loop.yaml'), error: `cannot read ${at('loop.yaml')}: a link that loops` },
    ]);
  });
});

describe('the order apply publishes files in', () => {
  const file = (workflowId: string | undefined, ...calls: string[]) => ({ workflowId, calls });
  const ids = (files: { workflowId?: string | undefined }[]) => files.map((f) => f.workflowId ?? '?');

  it('reads the workflows SUBWORKFLOW nodes call, in YAML or JSON, and none from a text that does not parse', () => {
    const yaml = [
      'nodes:',
      '  - {node_id: a, type: HTTP, spec: {url: "https://x.example"}}',
      '  - {node_id: pay, type: SUBWORKFLOW, spec: {workflow: payment}}',
      '  - {node_id: ship, type: SUBWORKFLOW, spec: {workflow: shipping}}',
      '',
    ].join('\n');
    expect(calledWorkflows(yaml)).toEqual(['payment', 'shipping']);
    expect(calledWorkflows('{"nodes": [{"node_id": "p", "type": "SUBWORKFLOW", "spec": {"workflow": "payment"}}]}')).toEqual(['payment']);
    expect(calledWorkflows('nodes:\n  - {node_id: a\n')).toEqual([]);
    expect(calledWorkflows('nodes:\n  - {node_id: p, type: SUBWORKFLOW, spec: {workflow: {x: 1}}}\n')).toEqual([]);
    expect(calledWorkflows('')).toEqual([]);
  });

  it("puts the examples folder's payment before order-with-payment, which calls it", async () => {
    const { readFile } = await import('node:fs/promises');
    const examples = join(fileURLToPath(new URL('../../../../examples/', import.meta.url)));
    const targets = (await definitionTargets([examples], false)) as { path: string }[];
    const files = await Promise.all(
      targets.map(async (t) => ({
        path: t.path,
        workflowId: workflowIdOf(t.path, await readFile(t.path, 'utf8'), undefined),
        calls: calledWorkflows(await readFile(t.path, 'utf8')),
      })),
    );
    const order = ids(applyOrder(files));
    expect(order).toContain('order-with-payment');
    expect(order.indexOf('payment')).toBeLessThan(order.indexOf('order-with-payment'));
  });

  it('moves a called workflow up to just before its caller and keeps the given order otherwise', () => {
    expect(ids(applyOrder([file('a'), file('b', 'd'), file('c'), file('d'), file('e')]))).toEqual(['a', 'd', 'b', 'c', 'e']);
    // Through a chain: c calls b, b calls a, given last.
    expect(ids(applyOrder([file('c', 'b'), file('b', 'a'), file('a')]))).toEqual(['a', 'b', 'c']);
    // A workflow no file of the command provides, or the file's own, does not hold it back.
    expect(ids(applyOrder([file('a', 'elsewhere'), file('b', 'b'), file(undefined), file('c')]))).toEqual(['a', 'b', '?', 'c']);
  });

  it('keeps files that call each other in a cycle in their given order', () => {
    expect(ids(applyOrder([file('a', 'b'), file('b', 'a'), file('c')]))).toEqual(['a', 'b', 'c']);
    expect(ids(applyOrder([file('x'), file('b', 'c'), file('c', 'b'), file('a', 'b')]))).toEqual(['x', 'b', 'c', 'a']);
    // A file outside the cycle that one of its members calls is still moved up.
    expect(ids(applyOrder([file('a', 'b'), file('b', 'a', 'z'), file('z')]))).toEqual(['a', 'z', 'b']);
  });
});

describe('the definition workflows get prints', () => {
  const definition = { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] };

  it('is the YAML as published, comments kept; a definition published as JSON is written as YAML', () => {
    const yaml = '# the first node\nnodes:\n  - {node_id: a, type: FORK}\nedges: []';
    expect(definitionText('yaml', { definition, source: yaml })).toBe(`${yaml}\n`);
    expect(definitionText('yaml', { definition, source: JSON.stringify(definition) })).toBe('nodes:\n  - node_id: a\n    type: FORK\nedges: []\n');
    expect(definitionText('json', { definition, source: yaml })).toBe(`${JSON.stringify(definition, null, 2)}\n`);
  });
});

describe('weft validate -f, which takes what apply -f takes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-validate-'));
    await mkdir(join(dir, 'defs/more'), { recursive: true });
    await writeFile(join(dir, 'defs/a.yaml'), 'nodes:\n  - {node_id: a, type: FORK}\n');
    await writeFile(join(dir, 'defs/b.json'), '{"nodes": [{"node_id": "b", "type": "TELEPORT"}]}');
    await writeFile(join(dir, 'defs/more/c.yml'), 'nodes:\n  - {node_id: c, type: FORK}\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('checks each file of a folder, prints a list with -o json or yaml, and exits 1 when one is invalid', async () => {
    const defs = join(dir, 'defs');
    const r = await cli({}, 'validate', '-f', defs);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${join(defs, 'a.yaml')}: valid (1 node, 0 edges)`);
    expect(lines[1]).toBe(`${join(defs, 'b.json')}: 1 problem`);
    expect(lines[2]).toMatch(/^ {2}- nodes\[0\]\.type \(node b\): /);
    expect(lines).toHaveLength(3);

    const json = await cli({}, 'validate', '-f', defs, '-R', '-o', 'json');
    expect(json.code).toBe(1);
    const list = JSON.parse(json.stdout);
    expect(list.map((v: { file: string; valid: boolean }) => [v.file, v.valid])).toEqual([
      [join(defs, 'a.yaml'), true],
      [join(defs, 'b.json'), false],
      [join(defs, 'more/c.yml'), true],
    ]);
    expect(YAML.parse((await cli({}, 'validate', '-f', defs, '-R', '-o', 'yaml')).stdout)).toEqual(list);
  });

  it('takes -f several times, names a missing file on stderr and checks the others', async () => {
    const missing = join(dir, 'missing.yaml');
    const r = await cli({}, 'validate', '-f', join(dir, 'defs/more/c.yml'), '-f', missing, '-f', join(dir, 'defs/a.yaml'), '-o', 'json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).map((v: { valid: boolean }) => v.valid)).toEqual([true, true]);
    expect(r.stderr).toBe(`error: cannot read ${missing}: no such file\n`);
    expect((await cli({}, 'validate', '-f', join(dir, 'defs/more/c.yml'), '-f', join(dir, 'defs/a.yaml'))).code).toBe(0);
  });
});
