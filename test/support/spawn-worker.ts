import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A process started by {@link spawnWorker} or {@link spawnScheduler}, with everything it printed so far. */
export interface SpawnedWorker {
  child: ChildProcess;
  output: () => string;
}

/**
 * Starts `test/support/worker-process.ts` as a process of its own, straight from the sources, with
 * this process's environment plus `env`; resolves once it prints `worker ready` (it consumes its
 * queues).
 *
 * @throws Error when it exits first, or is not ready within 45 s (with what it printed)
 */
export function spawnWorker(env: NodeJS.ProcessEnv): Promise<SpawnedWorker> {
  return spawnReady('worker', env);
}

/**
 * Starts `test/support/scheduler-process.ts` as a process of its own, as {@link spawnWorker} does;
 * resolves once it prints `scheduler ready` (its pollers started).
 *
 * @throws Error when it exits first, or is not ready within 45 s (with what it printed)
 */
export function spawnScheduler(env: NodeJS.ProcessEnv): Promise<SpawnedWorker> {
  return spawnReady('scheduler', env);
}

async function spawnReady(role: 'worker' | 'scheduler', env: NodeJS.ProcessEnv): Promise<SpawnedWorker> {
  const child = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', `test/support/${role}-process.ts`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  await new Promise<void>((resolve, reject) => {
    // Not ready in time: killed, so no process outlives the suite that could not get its handle.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${role} process did not start in 45 s:\n${output}`));
    }, 45_000);
    const onData = (): void => {
      if (!output.includes(`${role} ready`)) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve();
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${role} process exited (${code}) before it was ready:\n${output}`));
    });
  });
  return { child, output: () => output };
}

/** SIGKILLs `child` and resolves once it is gone. */
export async function killWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}
