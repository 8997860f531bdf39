import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeExecutor } from '../../apps/worker/src/executors/code/code.executor.js';
import { Cgroups } from '../../apps/worker/src/executors/code/cgroup.js';
import { processesOf } from '../../apps/worker/src/executors/code/processes.js';
import { claimUidBlock } from '../../apps/worker/src/executors/code/uid-pool.js';
import { failure } from '../../apps/worker/src/executors/execution-failure.testing.js';

/**
 * Tenant CODE attacking the worker and the executions beside it, through one CodeExecutor as a
 * worker builds it (root: bubblewrap, cgroups, a uid block). Each case is an attack that worked
 * when executions shared the worker's file system, process table and limits per process.
 */

const py = { taskId: 't001', nodeId: 'attack', attempt: 1, runtime: 'python' };
const js = { taskId: 't002', nodeId: 'attack', attempt: 1, runtime: 'js' };
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn('code-sandbox attacks: not root, skipped (a worker that is not root refuses CODE)');
const suite = asRoot ? describe : describe.skip;

let tempDir: string;
let code: CodeExecutor;

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'weft-attack-'));
  await chmod(tempDir, 0o1777);
  code = new CodeExecutor({ tempDir });
});
afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

suite('the sandbox itself', () => {
  it('applies every part of the isolation as root, and says so', async () => {
    const isolation = await code.isolation();
    expect(isolation.missing).toEqual([]);
    expect(isolation.confined).toBe(true);
    expect(isolation.holds.join('\n')).toMatch(/bubblewrap/);
    expect(isolation.holds.join('\n')).toMatch(/cgroup v[12]/);
  });

  it('shows the code none of the worker: no other process, no worker files, no environment', async () => {
    const out = (await code.execute(
      {
        code:
          'import os\n' +
          'def handler(input):\n' +
          '    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())\n' +
          '    return {"pids": pids, "root": sorted(os.listdir("/")), "uid": os.getuid(), "groups": os.getgroups(),\n' +
          '            "tmp_visible": os.path.exists(input["worker_tmp"]), "env": sorted(os.environ)}\n',
        worker_tmp: tempDir,
      },
      py,
    )) as { pids: number[]; root: string[]; uid: number; groups: number[]; tmp_visible: boolean; env: string[] };
    // pid 1 is the sandbox's init, 2 the runner: nothing of the host's process table.
    expect(out.pids).toEqual([1, 2]);
    expect(out.root).toEqual(expect.arrayContaining(['usr', 'proc', 'dev', 'tmp', 'weft']));
    expect(out.root).not.toContain('root');
    expect(out.root).not.toContain('home');
    expect(out.tmp_visible).toBe(false);
    expect(out.uid).toBeGreaterThanOrEqual(code.uidRange!.base);
    expect(out.groups).toEqual([]);
    expect(out.env).not.toContain('DATABASE_URL');
  });

  it("has no network: the database and Redis on the worker's loopback are unreachable, its Unix sockets invisible", async () => {
    const probe = await code.execute(
      {
        code:
          'import socket, os\n' +
          'def handler(input):\n' +
          '    out = {}\n' +
          '    for port in (5432, 6379):\n' +
          '        try:\n' +
          '            socket.create_connection(("127.0.0.1", port), 2).close()\n' +
          '            out[str(port)] = "connected"\n' +
          '        except OSError as e:\n' +
          '            out[str(port)] = "refused"\n' +
          '    out["run"] = os.path.exists("/run/postgresql") or os.path.exists("/var/run/postgresql")\n' +
          '    return out\n',
      },
      py,
    );
    expect(probe).toEqual({ '5432': 'refused', '6379': 'refused', run: false });
    // The worker itself reaches the database: the isolation is the code's, not the machine's.
    await new Promise<void>((resolve, reject) => {
      const s = connect(5432, '127.0.0.1', () => {
        s.end();
        resolve();
      });
      s.on('error', reject);
    });
  });

  it("gives concurrent executions different uids, and an execution cannot see another one's files", async () => {
    const slow = code.execute(
      {
        code: 'import time, os\ndef handler(input):\n    open("secret.txt", "w").write("A")\n    time.sleep(1.5)\n    return os.getuid()\n',
        secret: 'A-SECRET',
      },
      py,
    );
    // The slow one runs: a process of the executor's uids (its own block) exists.
    const range = code.uidRange!;
    for (let i = 0; (await processesOf({ first: range.base, count: range.size })).length === 0; i++) {
      if (i > 2_000) throw new Error('the first execution never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    const other = (await code.execute(
      {
        code:
          'import os\n' +
          'def handler(input):\n' +
          '    found = []\n' +
          '    for top in ("/tmp", "/weft", "/dev/shm"):\n' +
          '        for root, dirs, files in os.walk(top):\n' +
          '            found += [os.path.join(root, f) for f in files]\n' +
          '    texts = [open(f, errors="replace").read() for f in found if os.access(f, os.R_OK)]\n' +
          '    marker, name = "A-" + "SECRET", "secret" + ".txt"\n' +
          '    return {"uid": os.getuid(), "leak": any(marker in t for t in texts) or any(f.endswith(name) for f in found)}\n',
      },
      py,
    )) as { uid: number; leak: boolean };
    const slowUid = (await slow) as number;
    expect(other.leak).toBe(false);
    expect(other.uid).not.toBe(slowUid);
  });
});

suite('a worker that cannot apply every limit', () => {
  it('refuses CODE, naming what is missing, unless allowed to run it unconfined', async () => {
    const limp = new CodeExecutor({ tempDir, cgroups: false, bwrap: false });
    const isolation = await limp.isolation();
    expect(isolation.confined).toBe(false);
    const err = await failure(limp.execute({ code: 'def handler(input):\n    return 1\n' }, py));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(
      /^this worker does not run CODE: no per-execution cgroup: cgroups are turned off in the worker options; bubblewrap \(bwrap\) is not on PATH.*WEFT_CODE_UNCONFINED=1/,
    );
    const dev = new CodeExecutor({ tempDir, cgroups: false, bwrap: false, allowUnconfined: true });
    expect(await dev.execute({ code: 'def handler(input):\n    return 1\n' }, py)).toBe(1);
  });
});

suite('what the kernel shares beyond the namespaces', () => {
  it('keeps kernel keyrings closed: nothing stored for the next execution on the same uid', async () => {
    const keyring =
      'import ctypes, os\n' +
      'def handler(input):\n' +
      '    libc = ctypes.CDLL(None, use_errno=True)\n' +
      '    libc.syscall.restype = ctypes.c_long\n' +
      '    data = b"left-by-tenant-A"\n' +
      '    # add_key("user", "weftleak", data, len, KEY_SPEC_USER_KEYRING = -4)\n' +
      '    r = libc.syscall(248, b"user", b"weftleak", data, len(data), -4)\n' +
      '    return [r, os.strerror(ctypes.get_errno())]\n';
    expect(await code.execute({ code: keyring }, py)).toEqual([-1, 'Operation not permitted']);
  });

  it('creates no user namespace inside the sandbox (which would hold every capability), while processes and threads still start', async () => {
    const out = await code.execute(
      {
        code:
          'import subprocess, threading\n' +
          'def handler(input):\n' +
          '    u = subprocess.run(["unshare", "-Ur", "true"], capture_output=True, text=True)\n' +
          '    t = threading.Thread(target=lambda: None); t.start(); t.join()\n' +
          '    echo = subprocess.run(["echo", "child ok"], capture_output=True, text=True).stdout.strip()\n' +
          '    return {"unshare": u.returncode, "echo": echo}\n',
      },
      py,
    );
    expect(out).toEqual({ unshare: 1, echo: 'child ok' });
  });

  it('opens no socket of a family other than Unix, IPv4 and IPv6, and no io_uring, userfaultfd, BPF or perf event', async () => {
    const probe =
      'import ctypes, os, socket\n' +
      'def handler(input):\n' +
      '    out = {}\n' +
      '    def sock(name, family, kind=socket.SOCK_STREAM, proto=0):\n' +
      '        try:\n' +
      '            socket.socket(family, kind, proto).close()\n' +
      '            out[name] = "opened"\n' +
      '        except OSError as e:\n' +
      '            out[name] = os.strerror(e.errno)\n' +
      '    sock("netlink", socket.AF_NETLINK, socket.SOCK_RAW, 0)\n' +
      '    sock("vsock", 40)\n' +
      '    sock("packet", 17, socket.SOCK_DGRAM)\n' +
      '    sock("bluetooth", 31)\n' +
      '    sock("inet", socket.AF_INET)\n' +
      '    sock("inet6", socket.AF_INET6)\n' +
      '    sock("unix", socket.AF_UNIX)\n' +
      '    try:\n' +
      '        a, b = socket.socketpair(socket.AF_UNIX)\n' +
      '        a.sendall(b"ping"); out["socketpair"] = b.recv(4).decode()\n' +
      '    except OSError as e:\n' +
      '        out["socketpair"] = os.strerror(e.errno)\n' +
      '    try:\n' +
      '        socket.socketpair(socket.AF_INET)\n' +
      '        out["socketpair_inet"] = "opened"\n' +
      '    except OSError as e:\n' +
      '        out["socketpair_inet"] = os.strerror(e.errno)\n' +
      '    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)\n' +
      '    cli = socket.create_connection(srv.getsockname()); conn, _ = srv.accept()\n' +
      '    cli.sendall(b"pong"); out["loopback"] = conn.recv(4).decode()\n' +
      '    libc = ctypes.CDLL(None, use_errno=True)\n' +
      '    libc.syscall.restype = ctypes.c_long\n' +
      '    params = ctypes.create_string_buffer(120)\n' +
      '    attr = ctypes.create_string_buffer(128)\n' +
      '    for name, args in input["calls"].items():\n' +
      '        ctypes.set_errno(0)\n' +
      '        args = [params if a == "buf" else attr if a == "attr" else a for a in args]\n' +
      '        r = libc.syscall(*args)\n' +
      '        out[name] = os.strerror(ctypes.get_errno()) if r < 0 else "ok"\n' +
      '    out["dev_userfaultfd"] = os.path.exists("/dev/userfaultfd")\n' +
      '    return out\n';
    const x64 = process.arch === 'x64';
    const calls = {
      // io_uring_setup(8, &params), io_uring_enter(-1, …), io_uring_register(-1, …)
      io_uring_setup: [425, 8, 'buf'],
      io_uring_enter: [426, -1, 0, 0, 0, 0, 0],
      io_uring_register: [427, -1, 0, 0, 0],
      // userfaultfd(O_CLOEXEC | O_NONBLOCK)
      userfaultfd: [x64 ? 323 : 282, 0o2004000],
      // bpf(BPF_PROG_LOAD, &attr, sizeof attr), perf_event_open(&attr, 0, -1, -1, 0)
      bpf: [x64 ? 321 : 280, 5, 'attr', 128],
      perf_event_open: [x64 ? 298 : 241, 'attr', 0, -1, -1, 0],
    };
    const refused = 'Address family not supported by protocol';
    expect(await code.execute({ code: probe, calls }, py)).toEqual({
      netlink: refused,
      vsock: refused,
      packet: refused,
      bluetooth: refused,
      inet: 'opened',
      inet6: 'opened',
      unix: 'opened',
      socketpair: 'ping',
      socketpair_inet: refused,
      loopback: 'pong',
      io_uring_setup: 'Operation not permitted',
      io_uring_enter: 'Operation not permitted',
      io_uring_register: 'Operation not permitted',
      userfaultfd: 'Operation not permitted',
      bpf: 'Operation not permitted',
      perf_event_open: 'Operation not permitted',
      dev_userfaultfd: false,
    });
  });

  it('still runs Node with its event loop, file system, threads and loopback sockets under the filter', async () => {
    const out = await code.execute(
      {
        code:
          'const fs = require("node:fs");\n' +
          'const net = require("node:net");\n' +
          'const { Worker } = require("node:worker_threads");\n' +
          'async function handler() {\n' +
          '  await fs.promises.writeFile("f.txt", "written");\n' +
          '  const read = await fs.promises.readFile("f.txt", "utf8");\n' +
          '  const thread = await new Promise((resolve, reject) => {\n' +
          '    const w = new Worker("require(\'node:worker_threads\').parentPort.postMessage(6 * 7)", { eval: true });\n' +
          '    w.once("message", resolve); w.once("error", reject);\n' +
          '  });\n' +
          '  const echoed = await new Promise((resolve, reject) => {\n' +
          '    const server = net.createServer((s) => s.pipe(s)).listen(0, "127.0.0.1", () => {\n' +
          '      const c = net.connect(server.address().port, "127.0.0.1", () => c.end("echo"));\n' +
          '      let got = ""; c.on("data", (d) => (got += d)); c.on("end", () => { server.close(); resolve(got); });\n' +
          '      c.on("error", reject);\n' +
          '    });\n' +
          '  });\n' +
          '  return { read, thread, echoed };\n' +
          '}\n',
      },
      js,
    );
    expect(out).toEqual({ read: 'written', thread: 42, echoed: 'echo' });
  });

  it('caps open files per process at 256, so the 128 processes of an execution hold at most 32,768', async () => {
    const opened = await code.execute(
      {
        code:
          'def handler(input):\n' +
          '    files = []\n' +
          '    try:\n' +
          '        for _ in range(5000):\n' +
          '            files.append(open("/dev/null"))\n' +
          '    except OSError as e:\n' +
          '        return [len(files), e.strerror]\n' +
          '    return [len(files), None]\n',
      },
      py,
    );
    expect(opened).toEqual([expect.any(Number), 'Too many open files']);
    // 256 less stdin, stdout, stderr and the runner's own files.
    expect((opened as [number])[0]).toBeGreaterThan(200);
    expect((opened as [number])[0]).toBeLessThan(256);
  });
});

suite("the memory of all of a worker's executions together", () => {
  const MIB = 1024 * 1024;
  let small: CodeExecutor;
  const events: string[] = [];
  beforeAll(() => {
    small = new CodeExecutor({ tempDir, maxTotalMemoryMb: 256, onMemory: (e) => events.push(`${e.type} ${e.taskId}`) });
  });

  it('limits the cgroup holding every execution to the total', async () => {
    const isolation = await small.isolation();
    expect(isolation.missing).toEqual([]);
    const all = isolation.cgroups!;
    expect(all.parents[0]).toMatch(new RegExp(`/weft-code-${small.uidRange!.base}$`));
    const limit = all.version === 2 ? 'memory.max' : 'memory.limit_in_bytes';
    expect(Number((await readFile(join(all.parents[0], limit), 'utf8')).trim())).toBe(256 * MIB);
    expect(isolation.holds.join('\n')).toMatch(/256 MiB for all executions together/);
  });

  it('makes a second 200 MB execution wait until the first one ended, in a 256 MB total', async () => {
    events.length = 0;
    const handler = 'import time\ndef handler(input):\n    time.sleep(input["sleep"])\n    return input["name"]\n';
    const first = small.execute({ code: handler, memory_mb: 200, sleep: 1, name: 'first' }, { ...py, taskId: 'first' });
    const second = small.execute({ code: handler, memory_mb: 200, sleep: 0, name: 'second' }, { ...py, taskId: 'second' });
    expect(await Promise.all([first, second])).toEqual(['first', 'second']);
    expect(events).toEqual(['reserved first', 'waiting second', 'released first', 'reserved second', 'released second']);
    expect(small.memory.state).toEqual({ totalMb: 256, reservedMb: 0, waiting: 0 });
  });

  it('stops a wait for memory when the attempt is cancelled, and lets the next one in', async () => {
    events.length = 0;
    const cancel = new AbortController();
    const stopLoop = new AbortController();
    const loop = small.execute(
      { code: 'def handler(input):\n    while True:\n        pass\n', memory_mb: 200, timeout_seconds: 60 },
      { ...py, taskId: 'loop', signal: stopLoop.signal },
    );
    const waiting = small.execute({ code: 'def handler(input):\n    return 1\n', memory_mb: 100 }, { ...py, taskId: 'waiting', signal: cancel.signal });
    const next = small.execute({ code: 'def handler(input):\n    return 2\n', memory_mb: 50 }, { ...py, taskId: 'next' });
    await new Promise<void>((resolve) => {
      const check = (): void => void (small.memory.state.waiting === 2 ? resolve() : setTimeout(check, 10));
      check();
    });
    cancel.abort();
    expect((await failure(waiting)).message).toBe('execution was cancelled');
    // 50 MB fit beside the 200 once the 100 MB waiter ahead of it left the queue.
    expect(await next).toBe(2);
    expect(events).toEqual(['reserved loop', 'waiting waiting', 'waiting next', 'abandoned waiting', 'reserved next', 'released next']);
    stopLoop.abort();
    expect((await failure(loop)).message).toBe('execution was cancelled');
    expect(events.slice(6)).toEqual(['released loop']);
  });

  it('fails an execution larger than the whole total at once, for good, naming the setting', async () => {
    const err = await failure(small.execute({ code: 'def handler(input):\n    return 1\n', memory_mb: 300 }, py));
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      'spec.memory_mb 300 is over the 256 MB that all CODE executions of this worker may hold together (WEFT_CODE_MAX_TOTAL_MB): it can never run here; lower memory_mb or raise WEFT_CODE_MAX_TOTAL_MB',
    );
  });
});

suite('a worker that stalls', () => {
  it('does not time out an execution that finished in time while the worker was stopped past the deadline', async () => {
    const executor = fileURLToPath(new URL('../../apps/worker/src/executors/code/code.executor.ts', import.meta.url));
    const script =
      `import { CodeExecutor } from ${JSON.stringify(executor)};` +
      `const c = new CodeExecutor({ tempDir: ${JSON.stringify(tempDir)} });` +
      `await c.isolation(); console.log('ready ' + c.uidRange.base + ' ' + c.uidRange.size);` +
      `try { console.log(JSON.stringify(await c.execute({ code: 'import time\\ndef handler(input):\\n    time.sleep(0.5)\\n    return "done"\\n', timeout_seconds: 2 }, { taskId: 't', nodeId: 'n', attempt: 1, runtime: 'python' }))); }` +
      `catch (e) { console.log(JSON.stringify(e.message)); }`;
    const worker = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    worker.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise<void>((resolve) => {
      const check = (): void => void (/ready \d+ \d+\n/.test(out) ? resolve() : setTimeout(check, 20));
      check();
    });
    // The handler runs: a process of the executor's uids exists.
    const [, base, size] = /ready (\d+) (\d+)/.exec(out)!.map(Number);
    for (let i = 0; (await processesOf({ first: base!, count: size! })).length === 0; i++) {
      if (i > 2_000) throw new Error('the handler never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    worker.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 3000)); // past the 2 s deadline; the handler ended meanwhile
    worker.kill('SIGCONT');
    await new Promise((r) => worker.on('close', r));
    expect(out.trim().split('\n').pop()).toBe('"done"');
  });
});

suite('processes that try to outlive their attempt', () => {
  it('kills a double-forked daemon that left the session, on return and on timeout', async () => {
    const daemon =
      'import os, time\n' +
      'def handler(input):\n' +
      '    if os.fork() == 0:\n' +
      '        os.setsid()\n' +
      '        if os.fork() == 0:\n' +
      '            os.chdir("/")\n' +
      '            for fd in (0, 1, 2):\n' +
      '                os.dup2(os.open("/dev/null", os.O_RDWR), fd)\n' +
      '            os.execve("/bin/sleep", ["sleep", "60"], {})\n' +
      '        os._exit(0)\n' +
      '    time.sleep(0.3)\n' +
      '    while input["loop"]:\n' +
      '        pass\n' +
      '    return "ok"\n';
    const range = { first: code.uidRange!.base, count: code.uidRange!.size };
    expect(await code.execute({ code: daemon, loop: false }, py)).toBe('ok');
    expect(await processesOf(range)).toEqual([]);
    expect((await failure(code.execute({ code: daemon, loop: true, timeout_seconds: 2 }, py))).message).toBe('timed out after 2s');
    expect(await processesOf(range)).toEqual([]);
  });

  it('leaves nothing in /tmp or /dev/shm for the next execution on the same uid', async () => {
    const first = await code.execute(
      { code: 'import os\ndef handler(input):\n    open("/tmp/left", "w").write("x")\n    open("/dev/shm/left", "w").write("x")\n    return os.getuid()\n' },
      py,
    );
    const second = await code.execute({ code: 'import os\ndef handler(input):\n    return [os.getuid(), os.listdir("/tmp"), os.listdir("/dev/shm")]\n' }, py);
    expect(second).toEqual([first, [], []]);
  });
});

suite('limits that hold for the whole execution', () => {
  it('holds memory for all processes together: four forked children cannot each take the limit', async () => {
    const run = code.execute(
      {
        code:
          'import os, time\n' +
          'def handler(input):\n' +
          '    kids = []\n' +
          '    for _ in range(4):\n' +
          '        pid = os.fork()\n' +
          '        if pid == 0:\n' +
          '            block = bytearray(60 * 1024 * 1024)\n' +
          '            for i in range(0, len(block), 4096):\n' +
          '                block[i] = 1\n' +
          '            time.sleep(2)\n' +
          '            os._exit(0)\n' +
          '        kids.append(pid)\n' +
          '    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in kids]\n',
        memory_mb: 128,
        timeout_seconds: 20,
      },
      py,
    );
    // Each child is within 128 MB on its own; together they are not. The kernel kills some of the
    // execution's processes (-9): children, or the handler itself, which fails the attempt.
    const outcome = await run.then(
      (statuses) => ({ killedChildren: (statuses as number[]).filter((s) => s === -9).length }),
      (err: Error) => ({ error: err.message }),
    );
    if ('error' in outcome) expect(outcome.error).toMatch(/out of memory: limit 128 MB for all its processes/);
    else expect(outcome.killedChildren).toBeGreaterThanOrEqual(1);
  });

  it('fails the attempt when the execution as a whole runs out of memory', async () => {
    const err = await failure(
      code.execute(
        { code: 'function handler() {\n  const keep = [];\n  for (;;) keep.push(Buffer.alloc(8 * 1024 * 1024, 1));\n}\n', memory_mb: 96, timeout_seconds: 20 },
        js,
      ),
    );
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/out of memory: limit 96 MB for all its processes/);
  });

  it('caps the number of processes of an execution', async () => {
    const out = (await code.execute(
      {
        code:
          'import subprocess\n' +
          'def handler(input):\n' +
          '    started = []\n' +
          '    try:\n' +
          '        for _ in range(500):\n' +
          '            started.append(subprocess.Popen(["sleep", "5"]))\n' +
          '    except OSError as e:\n' +
          '        return {"started": len(started), "error": type(e).__name__}\n' +
          '    return {"started": len(started)}\n',
        timeout_seconds: 20,
      },
      py,
    )) as { started: number; error?: string };
    expect(out.error).toBeDefined();
    expect(out.started).toBeLessThan(128);
  });

  it('caps the size of any file the code writes, and of /tmp', async () => {
    const small = new CodeExecutor({ tempDir, maxResultBytes: 1024 * 1024 });
    const out = await small.execute(
      {
        code:
          'def handler(input):\n' +
          '    out = {}\n' +
          '    for path in ("/tmp/big", "/weft/work/big"):\n' +
          '        try:\n' +
          '            with open(path, "wb") as f:\n' +
          '                f.write(b"x" * (8 * 1024 * 1024))\n' +
          '            out[path] = "written"\n' +
          '        except OSError as e:\n' +
          '            out[path] = e.strerror\n' +
          '    return out\n',
        memory_mb: 64,
      },
      py,
    );
    expect(out).toEqual({ '/tmp/big': 'File too large', '/weft/work/big': 'File too large' });
    const tmpfs = await code.execute(
      {
        code:
          'def handler(input):\n' +
          '    n = 0\n' +
          '    try:\n' +
          '        for i in range(100):\n' +
          '            with open("/tmp/part%d" % i, "wb") as f:\n' +
          '                f.write(b"x" * (4 * 1024 * 1024))\n' +
          '            n += 1\n' +
          '    except OSError as e:\n' +
          '        return [n, e.strerror]\n' +
          '    return [n, None]\n',
        memory_mb: 64,
      },
      py,
    );
    // /tmp holds a quarter of memory_mb, 16 MB: at most 4 parts of 4 MB.
    expect((tmpfs as [number, string])[0]).toBeLessThanOrEqual(4);
    expect((tmpfs as [number, string])[1]).not.toBeNull();
  });

  it('checks memory_mb and timeout_seconds after templates: a resolved value over the cap fails for good', async () => {
    for (const [spec, message] of [
      [{ memory_mb: 1_000_000 }, 'invalid CODE spec: spec.memory_mb 1000000 is over the limit of 4096 MB'],
      [{ memory_mb: '1000000' }, 'invalid CODE spec: spec.memory_mb 1000000 is over the limit of 4096 MB'],
      [{ memory_mb: 1 }, 'invalid CODE spec: spec.memory_mb must be at least 16 MB, got 1'],
      [{ timeout_seconds: 40_000_000 }, 'invalid CODE spec: spec.timeout_seconds 40000000 is over the limit of 31536000 seconds'],
    ] as const) {
      const err = await failure(code.execute({ code: 'def handler(input):\n    return 1\n', ...spec }, py));
      expect({ message: err.message, retryable: err.retryable }).toEqual({ message, retryable: false });
    }
  });
});

suite('a result file the code controls', () => {
  const tamper = (how: string) =>
    'import os, sys\n' +
    'def handler(input):\n' +
    '    for path in ("result.json", sys.argv[3]):\n' +
    '        try:\n' +
    '            os.unlink(path)\n' +
    '        except OSError:\n' +
    '            pass\n' +
    '        try:\n' +
    `            ${how}\n` +
    '        except OSError:\n' +
    '            pass\n' +
    '    os._exit(0)\n';

  it('never blocks on a FIFO: four in a row fail clearly and the next execution still runs', async () => {
    for (let i = 0; i < 4; i++) {
      const err = await failure(code.execute({ code: tamper('os.mkfifo(path)'), timeout_seconds: 5 }, py));
      expect(err.message).toMatch(/without a result|not read/);
    }
    expect(await code.execute({ code: 'def handler(input):\n    return "still running"\n' }, py)).toBe('still running');
  });

  it("never reads what a symlink points to (/etc/shadow, the worker's environ, /dev/zero)", async () => {
    for (const target of ['/etc/shadow', `/proc/${process.pid}/environ`, '/dev/zero']) {
      const err = await failure(code.execute({ code: tamper(`os.symlink(${JSON.stringify(target)}, path)`), timeout_seconds: 5 }, py));
      expect(err.message).toMatch(/without a result|not read/);
      expect(err.message).not.toMatch(/root:|PATH=|\u0000/);
    }
  });

  it('without a sandbox too (a worker allowed to run CODE unconfined), refuses a FIFO and a symlink as the result', async () => {
    const bare = new CodeExecutor({ tempDir, bwrap: false, allowUnconfined: true });
    expect((await bare.isolation()).confined).toBe(false);
    const fifo = await failure(bare.execute({ code: tamper('os.mkfifo(path)'), timeout_seconds: 5 }, py));
    expect(fifo.message).toBe('the result file was replaced by a FIFO; it is not read');
    const link = await failure(bare.execute({ code: tamper('os.symlink("/etc/shadow", path)'), timeout_seconds: 5 }, py));
    expect(link.message).toBe('the result file was replaced by a symbolic link; it is not read');
    const zero = await failure(bare.execute({ code: tamper('os.symlink("/dev/zero", path)'), timeout_seconds: 5 }, py));
    expect(zero.message).toBe('the result file was replaced by a symbolic link; it is not read');
  });
});

suite('a worker taking over a uid block', () => {
  it('kills every process of its uids and removes the folders and cgroups a dead holder left, before its first execution', async () => {
    // A block of this process's own (claimed as a worker claims one, apart from the workers'
    // default blocks), so another run of this suite on the machine plays its dead holder elsewhere.
    const size = 4;
    const base = claimUidBlock(2_100_100_000, size, 2_100_100_000 + 64 * size - 1).first;
    const blockDir = join(tempDir, `weft-code-${base}`);
    // What a killed worker left: a process of its slot 1's uid, that slot's folder, a cgroup.
    await mkdir(join(blockDir, 'x-stale', 'in'), { recursive: true });
    await writeFile(join(blockDir, 'x-stale', 'in', 'input.json'), '{"secret": "A"}');
    await chown(join(blockDir, 'x-stale'), base + 1, base + 1);
    const survivor = spawn('/bin/sleep', ['60'], { uid: base + 1, gid: base + 1, detached: true, stdio: 'ignore' });
    survivor.unref();
    const cgroups = await Cgroups.detect();
    if (!(cgroups instanceof Cgroups)) throw new Error(cgroups);
    await cgroups.create(`weft-${base}-1-${process.pid}`, { memoryBytes: 64 * 1024 * 1024, maxProcesses: 8 });
    expect(await processesOf({ first: base, count: size })).toEqual([survivor.pid]);

    const heir = new CodeExecutor({ tempDir, uidBase: base, uidSlots: size });
    expect((await heir.isolation()).confined).toBe(true);
    expect(await processesOf({ first: base, count: size })).toEqual([]);
    expect(await readdir(blockDir)).toEqual(['seccomp.bpf']); // the heir's filter; the stale folder is gone
    if (cgroups.version === 1) expect(existsSync(join('/sys/fs/cgroup/pids', `weft-${base}-1-${process.pid}`))).toBe(false);
    expect(await heir.execute({ code: 'def handler(input):\n    return "clean"\n' }, py)).toBe('clean');
  });
});

suite('javascript', () => {
  it('runs ES modules and classic scripts in the sandbox', async () => {
    expect(await code.execute({ code: 'export async function handler(input) { return input.n * 2; }', n: 21 }, js)).toBe(42);
    expect(await code.execute({ code: 'module.exports.handler = () => process.getuid() >= 2000000000;' }, js)).toBe(true);
  });
});
