import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cgroups } from './cgroup.js';

/**
 * The cgroup files Weft writes, on a folder laid out like a cgroup mount (a real cgroupfs makes
 * the control files itself; here the folder only records what was written). The v1 path also
 * runs for real in the sandbox suites on this machine.
 */
let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'weft-cgroupfs-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('Cgroups on cgroup v2', () => {
  it("creates the execution group under the worker's own group with memory, no swap and pids", async () => {
    const own = join(root, 'system.slice', 'weft.service');
    await mkdir(own, { recursive: true });
    await writeFile(join(root, 'cgroup.controllers'), 'cpu memory pids');
    await writeFile(join(own, 'cgroup.controllers'), 'cpu memory pids');
    await writeFile(join(own, 'cgroup.subtree_control'), 'memory pids');
    const cgroups = await Cgroups.detect({ root, self: '0::/system.slice/weft.service\n' });
    if (!(cgroups instanceof Cgroups)) throw new Error(cgroups);
    expect(cgroups.version).toBe(2);
    const group = await cgroups.create('weft-7-0-1', { memoryBytes: 128 * 1024 * 1024, maxProcesses: 64 });
    const dir = join(own, 'weft-7-0-1');
    expect(group.procsFiles).toEqual([join(dir, 'cgroup.procs')]);
    expect(await readFile(join(dir, 'memory.max'), 'utf8')).toBe(String(128 * 1024 * 1024));
    expect(await readFile(join(dir, 'memory.swap.max'), 'utf8')).toBe('0');
    expect(await readFile(join(dir, 'pids.max'), 'utf8')).toBe('64');
    await writeFile(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(await group.oomKilled()).toBe(true);
  });

  it('moves the worker into a leaf of its group when the group may not hand controllers down', async () => {
    const own = join(root, 'weft');
    await mkdir(own, { recursive: true });
    await writeFile(join(root, 'cgroup.controllers'), 'memory pids');
    await writeFile(join(own, 'cgroup.controllers'), 'memory pids');
    // A group holding processes refuses subtree_control: a folder in its place makes the write fail.
    await mkdir(join(own, 'cgroup.subtree_control'));
    const cgroups = await Cgroups.detect({ root, self: '0::/weft\n' });
    expect(typeof cgroups).toBe('string');
    expect(await readFile(join(own, 'weft-worker', 'cgroup.procs'), 'utf8')).toBe(String(process.pid));
  });

  it('says why when the memory or pids controller is not delegated', async () => {
    await mkdir(join(root, 'weft'));
    await writeFile(join(root, 'cgroup.controllers'), 'cpu');
    await writeFile(join(root, 'weft', 'cgroup.controllers'), 'cpu');
    expect(await Cgroups.detect({ root, self: '0::/weft\n' })).toMatch(/cannot use the memory and pids controller \(not delegated to it\)/);
  });
});

describe('Cgroups on cgroup v1', () => {
  it('says which controller is missing', async () => {
    await mkdir(join(root, 'memory'));
    await writeFile(join(root, 'memory', 'cgroup.procs'), '');
    expect(await Cgroups.detect({ root, self: '4:memory:/\n8:pids:/\n' })).toMatch(/no cgroup pids controller is mounted/);
  });
});

describe("the group holding all of a worker's executions", () => {
  it('on cgroup v2: limits their memory together, hands the controllers on, and holds the execution groups', async () => {
    const own = join(root, 'weft');
    await mkdir(own, { recursive: true });
    await writeFile(join(root, 'cgroup.controllers'), 'memory pids');
    await writeFile(join(own, 'cgroup.controllers'), 'memory pids');
    await writeFile(join(own, 'cgroup.subtree_control'), 'memory pids');
    const cgroups = await Cgroups.detect({ root, self: '0::/weft\n' });
    if (!(cgroups instanceof Cgroups)) throw new Error(cgroups);
    const all = await cgroups.nest('weft-code-7', 256 * 1024 * 1024);
    const dir = join(own, 'weft-code-7');
    expect(await readFile(join(dir, 'memory.max'), 'utf8')).toBe(String(256 * 1024 * 1024));
    expect(await readFile(join(dir, 'memory.swap.max'), 'utf8')).toBe('0');
    expect(await readFile(join(dir, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids');
    const group = await all.create('weft-7-0-1', { memoryBytes: 200 * 1024 * 1024, maxProcesses: 64 });
    expect(group.procsFiles).toEqual([join(dir, 'weft-7-0-1', 'cgroup.procs')]);
    expect(all.describe()).toMatch(/256 MiB for all executions together/);
  });

  it('on cgroup v1: writes the memory limit of the parent (memory + swap too where accounted) and reuses a group left behind', async () => {
    for (const controller of ['memory', 'pids']) {
      await mkdir(join(root, controller, 'weft'), { recursive: true });
      await writeFile(join(root, controller, 'cgroup.procs'), '');
    }
    const memory = join(root, 'memory', 'weft', 'weft-code-7');
    // Left by a dead worker: a lower memory + swap limit and one execution group.
    await mkdir(join(memory, 'weft-7-3-9'), { recursive: true });
    await writeFile(join(memory, 'memory.memsw.limit_in_bytes'), String(64 * 1024 * 1024));
    const cgroups = await Cgroups.detect({ root, self: '7:memory:/weft\n5:pids:/weft\n' });
    if (!(cgroups instanceof Cgroups)) throw new Error(cgroups);
    const all = await cgroups.nest('weft-code-7', 512 * 1024 * 1024);
    expect(await readFile(join(memory, 'memory.limit_in_bytes'), 'utf8')).toBe(String(512 * 1024 * 1024));
    expect(await readFile(join(memory, 'memory.memsw.limit_in_bytes'), 'utf8')).toBe(String(512 * 1024 * 1024));
    expect(await readFile(join(memory, 'memory.use_hierarchy'), 'utf8')).toBe('1');
    expect(existsSync(join(memory, 'weft-7-3-9'))).toBe(false);
    expect(all.parents).toEqual([memory, join(root, 'pids', 'weft', 'weft-code-7')]);
    await all.create('weft-7-0-1', { memoryBytes: 200 * 1024 * 1024, maxProcesses: 64 });
    expect(await readFile(join(memory, 'weft-7-0-1', 'memory.limit_in_bytes'), 'utf8')).toBe(String(200 * 1024 * 1024));
  });
});
