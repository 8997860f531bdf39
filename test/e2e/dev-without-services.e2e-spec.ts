import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Why this machine cannot run the scenario (a network namespace needs root, unshare and ip), or undefined. */
function missing(): string | undefined {
  if (process.getuid?.() !== 0) return 'it needs root to create a network namespace';
  for (const tool of ['unshare', 'ip']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `it needs ${tool} (util-linux, iproute2)`;
    }
  }
  return undefined;
}

const skip = missing();
if (skip) process.stderr.write(`dev-without-services: skipped: ${skip}\n`);

/**
 * `weft dev` where nothing listens: test/support/dev-scenario.ts runs inside a network namespace
 * with only loopback up (`unshare --net`), so PostgreSQL on 127.0.0.1:5432 and Redis on
 * 127.0.0.1:6379 cannot answer, whatever runs on the machine. It must start the embedded
 * PostgreSQL and carry jobs and run updates in process, run a Python CODE node to success seen
 * over the subscription, and come back after a crash (SIGKILL) over the same data folder, where
 * the run whose task was running (its job lost with the process) is dispatched again and ends;
 * SIGTERM and SIGHUP (a closed terminal) each stop it and its server.
 */
(skip ? describe.skip : describe)('weft dev with nothing but Node.js', () => {
  it('runs workflows on an embedded PostgreSQL and the in-process transport, and recovers them after a crash', async () => {
    const home = mkdtempSync(join(tmpdir(), 'weft-dev-home-'));
    // The server runs as an unprivileged user, who must be able to enter the folder (mkdtemp's is 0700).
    chmodSync(home, 0o755);
    try {
      const script = `ip link set lo up && exec "$0" --import ./test/support/ts-register.mjs test/support/dev-scenario.ts "$1"`;
      const { stdout } = await promisify(execFile)('unshare', ['--net', 'sh', '-c', script, process.execPath, home], {
        cwd: root,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((err: { stderr?: string; message: string }) => {
        throw new Error(`the scenario failed: ${err.stderr || err.message}`);
      });
      const r = JSON.parse(stdout.trim().split('\n').pop()!);

      expect(r.first.database).toMatch(
        new RegExp(
          `^postgres://weft_app@127\\.0\\.0\\.1:\\d+/weft \\(embedded PostgreSQL \\d+\\.\\d+ in ${home}/dev-postgres, initialised now; database created, \\d+ migration\\(s\\) applied\\)$`,
        ),
      );
      expect(r.first.database).not.toContain(':5432/');
      expect(r.first.transport).toMatch(/^in process/);
      // lower() maps case beyond ASCII there (a cluster of locale C would take CAFÉ for another name).
      expect(r.first.names.cafe).toEqual({ code: 0, stderr: '' });
      expect(r.first.names.upper.code).toBe(4);
      expect(r.first.names.upper.stderr).toMatch(/tenant name "CAFÉ" is taken by tenant \S+ \(named "Café"; names are compared ignoring case\)/);
      // Nest's own start-up lines are at debug: none at the default level.
      expect(r.first.out).not.toMatch(/InstanceLoader|RouterExplorer|RoutesResolver/);
      // Nor the roles' start lines, which its summary says already.
      expect(r.first.out).not.toMatch(/consuming queues|polling every|ops endpoints \(metrics|GraphQL API at|"database weft on/);
      expect(r.first.out).toMatch(/^Weft ops endpoints \(no key\): /m);

      expect(r.final).toMatchObject({ status: 'SUCCEEDED', output: { square: { square: 49 } } });
      expect(r.final.tasks).toEqual(expect.arrayContaining([expect.objectContaining({ nodeId: 'square', status: 'COMPLETED', output: { square: 49 } })]));
      // The subscription showed the run waiting for its signal (sent only then), then carried it to its end.
      expect(r.seen[0]).toMatch(/^RUNNING .*gate:WAITING/);
      expect(r.seen.at(-1)).toMatch(/^SUCCEEDED .*square:COMPLETED/);

      // SIGKILL left the server running; the next start stopped it and started its own.
      expect(r.crash).toEqual({ orphanAlive: true, orphanGone: true });
      expect(r.second.out).toMatch(
        new RegExp(`^Weft stopped the PostgreSQL server \\(pid \\d+\\) an earlier weft dev left running on ${home}/dev-postgres$`, 'm'),
      );
      expect(r.hangup.out).not.toMatch(/^Weft stopped the PostgreSQL server/m);
      expect(r.second.database).toMatch(new RegExp(`\\(embedded PostgreSQL \\d+\\.\\d+ in ${home}/dev-postgres; migrations up to date\\)$`));
      expect(r.second.run).toMatchObject({ status: 'SUCCEEDED', output: { square: { square: 49 } } });
      expect(r.second.nap).toMatchObject({ status: 'SUCCEEDED', tasks: [{ nodeId: 'nap', status: 'COMPLETED', output: { rested: true } }] });
      // …brought back by the lost-task sweep once its lease expired.
      expect(r.second.out).toMatch(/lease of RUNNING task nap \(job \S+\) expired and its job is gone from queue python/);
      // SIGTERM: weft dev closed, then stopped its server, and exited 0.
      expect(r.second).toMatchObject({ exit: 0, serverGone: true, pidFileGone: true });
      // SIGHUP (its terminal closed): the same, no server left behind.
      expect(r.hangup).toMatchObject({ exit: 0, serverGone: true, pidFileGone: true });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 300_000);
});
