import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Launch } from './child.js';
import type { CodeLimits } from './limits.js';

/** The uid/gid code runs as. */
export interface RunAsUser {
  uid: number;
  gid: number;
}

/** Where an execution's files are on the worker's side. */
export interface ExecutionFiles {
  /** The execution's folder (owned by its uid, mode 0700), removed afterwards. */
  dir: string;
  /** `dir/in`: runner, handler and input.json, read-only inside the sandbox. */
  inDir: string;
  /** `dir/result.json`: the one file the sandbox may write that the worker reads. */
  resultFile: string;
  /** `dir/work`: the code's working directory when it runs without a sandbox. */
  workDir: string;
}

/**
 * A new execution folder under `parent`: `in/` holding `inputs` (file name → text; read-only
 * inside the sandbox), an empty `result.json` (the one file the sandbox writes back) and `work/`
 * (the working directory without a sandbox), all owned by `runAs` when given, the folder mode 0700.
 */
export async function createExecutionFiles(parent: string, runAs: RunAsUser | undefined, inputs: Record<string, string>): Promise<ExecutionFiles> {
  const dir = await mkdtemp(join(parent, 'x-'));
  const files: ExecutionFiles = { dir, inDir: join(dir, 'in'), resultFile: join(dir, 'result.json'), workDir: join(dir, 'work') };
  await Promise.all([mkdir(files.inDir), mkdir(files.workDir)]);
  const written = Object.entries(inputs).map(([name, text]) => [join(files.inDir, name), text] as const);
  await Promise.all([...written, [files.resultFile, ''] as const].map(([path, text]) => writeFile(path, text, { mode: 0o600 })));
  if (runAs) {
    const owned = [dir, files.inDir, files.workDir, files.resultFile, ...written.map(([path]) => path)];
    await Promise.all(owned.map((path) => chown(path, runAs.uid, runAs.gid)));
  }
  await chmod(dir, 0o700);
  return files;
}

/** The tools an execution's command line is built from; each is optional but bwrap needs setpriv as root. */
export interface SandboxTools {
  /** bubblewrap, when executions get namespaces of their own. */
  bwrap?: string;
  /** util-linux setpriv: drops to the execution's uid inside the sandbox (as root). */
  setpriv?: string;
  /** util-linux prlimit: RLIMIT_FSIZE, RLIMIT_CPU, RLIMIT_NPROC, RLIMIT_NOFILE, no core files. */
  prlimit?: string;
  /** The seccomp filter file bwrap installs ({@link seccompFilter}), passed to it as fd 3. */
  seccomp?: string;
}

/** Paths inside the sandbox. */
export const SANDBOX = { in: '/weft/in', result: '/weft/out/result.json', work: '/weft/work' } as const;

/** The file descriptor bwrap reads the seccomp filter from. */
export const SECCOMP_FD = 3;

/** PATH inside the sandbox. */
const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Parts of `/etc` the interpreters need (the dynamic linker's cache, OpenSSL's configuration, time zone, alternatives); nothing else of it is visible. */
const ETC_ENTRIES = ['ssl', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives', 'localtime', 'mime.types'];

/**
 * Joins the cgroup files given first (`n` of them) with the shell's own pid, then execs the rest
 * of the arguments: same pid, so every process of the execution starts inside the cgroup.
 */
const JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';

/**
 * The command line of one execution, outermost first:
 *
 * 1. `/bin/sh` writes its pid into the execution's cgroups (memory and pids limits for all its
 *    processes together), then execs
 * 2. `prlimit` (RLIMIT_FSIZE = the largest file, RLIMIT_CPU, RLIMIT_NPROC, RLIMIT_NOFILE, no core
 *    dumps), then
 * 3. `bwrap` with `--die-with-parent` and a seccomp filter (see seccomp.ts) (the worker's death kills the sandbox's pid 1, and with it
 *    every process of the execution): new pid, network (nothing but its own loopback), IPC, UTS
 *    and cgroup namespaces, a mount namespace holding only `/usr` (and the runtime's own prefix
 *    when it lives elsewhere), a few `/etc` entries, a fresh `/proc` and `/dev`, size-capped
 *    tmpfs `/tmp`, `/dev/shm` and working directory, the execution's inputs read-only and its
 *    result file; no environment but PATH, HOME and LANG (plus `env`); then
 * 4. as root, `setpriv` drops to the execution's uid and gid with no supplementary groups, no
 *    inheritable capabilities and no_new_privs (setuid binaries gain nothing); not root, bwrap
 *    runs it in a user namespace as the worker's own uid.
 *
 * Without bwrap (a worker allowed to run CODE unconfined), the command runs directly, as the
 * execution's uid when there is one, in `files.workDir`, with host paths.
 *
 * @param command the interpreter (a real path) and its arguments, with paths inside the sandbox
 *   when there is one ({@link SANDBOX}) and host paths otherwise
 */
export function launchCommand(
  tools: SandboxTools,
  command: string[],
  env: Record<string, string>,
  files: ExecutionFiles,
  limits: CodeLimits,
  runAs: RunAsUser | undefined,
  cgroupProcs: string[],
): Launch {
  let argv = command;
  let cwd = files.workDir;
  let spawnAs: RunAsUser | undefined;
  let joins = cgroupProcs;
  const environment = { PATH: SANDBOX_PATH, HOME: tools.bwrap ? SANDBOX.work : files.workDir, LANG: 'C.UTF-8', ...env };
  // As root, setpriv drops to the execution's uid as the last step, after the cgroups were joined
  // and the namespaces built, both of which need root.
  if (runAs && tools.setpriv) {
    argv = [tools.setpriv, `--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--inh-caps=-all', '--no-new-privs', '--', ...argv];
  } else if (runAs) {
    spawnAs = runAs; // no setpriv (and so no bwrap): Node switches the user, and the cgroups cannot be joined
    joins = [];
  }
  if (tools.bwrap) {
    const filter = tools.seccomp ? ['--seccomp', String(SECCOMP_FD)] : [];
    const binds = [runtimeBind(command[0])].filter((dir): dir is string => dir !== undefined);
    argv = [tools.bwrap, ...bwrapArgs(files, limits, runAs !== undefined, environment, binds), ...filter, '--', ...argv];
    cwd = files.dir;
  }
  if (tools.prlimit) {
    argv = [
      tools.prlimit,
      `--fsize=${limits.maxFileBytes}`,
      `--cpu=${limits.cpuSeconds}`,
      `--nproc=${limits.maxProcesses}`,
      `--nofile=${limits.maxOpenFiles}`,
      '--core=0',
      ...(limits.dataBytes !== undefined ? [`--data=${limits.dataBytes}`] : []),
      '--',
      ...argv,
    ];
  }
  if (joins.length > 0) argv = ['/bin/sh', '-c', JOIN_CGROUPS, 'weft-cgroup', String(joins.length), ...joins, ...argv];
  const seccomp = tools.bwrap && tools.seccomp ? { seccomp: tools.seccomp } : {};
  return { file: argv[0], args: argv.slice(1), env: tools.bwrap ? {} : environment, cwd, ...seccomp, ...(spawnAs ?? {}) };
}

function bwrapArgs(files: ExecutionFiles, limits: CodeLimits, asRoot: boolean, env: Record<string, string>, binds: string[]): string[] {
  const args = ['--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session'];
  if (asRoot) args.push('--cap-drop', 'ALL', '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID');
  else args.push('--unshare-user');
  // Folders bwrap creates on the way to a mount point are 0700 root: make the ones the code walks through 0755.
  for (const dir of ['/etc', '/weft', '/weft/out']) args.push('--perms', '0755', '--dir', dir);
  args.push('--ro-bind', '/usr', '/usr');
  for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64']) args.push(...mirror(top));
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', join('/etc', entry), join('/etc', entry));
  for (const dir of binds) args.push('--ro-bind', dir, dir);
  const size = String(limits.scratchBytes);
  args.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--perms',
    '1777',
    '--size',
    size,
    '--tmpfs',
    '/tmp',
    '--perms',
    '1777',
    '--size',
    size,
    '--tmpfs',
    '/dev/shm',
    '--perms',
    '0777',
    '--size',
    size,
    '--tmpfs',
    SANDBOX.work,
    '--ro-bind',
    files.inDir,
    SANDBOX.in,
    '--bind',
    files.resultFile,
    SANDBOX.result,
    '--chdir',
    SANDBOX.work,
    '--clearenv',
  );
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  return args;
}

/** `/lib` and friends: the host's symlink (merged /usr) as a symlink, a real folder as a read-only bind. */
function mirror(path: string): string[] {
  try {
    if (lstatSync(path).isSymbolicLink()) return ['--symlink', readlinkSync(path), path];
    return ['--ro-bind', path, path];
  } catch {
    return []; // not on this host
  }
}

/**
 * The folder to mount read-only so that `interpreter` runs inside the sandbox, or undefined when
 * `/usr` already holds it: its installation prefix (`<prefix>/bin/python3` → `<prefix>`).
 */
function runtimeBind(interpreter: string): string | undefined {
  const real = realpathOr(interpreter);
  if (real.startsWith('/usr/')) return undefined;
  const prefix = dirname(dirname(real));
  return prefix === '/' ? dirname(real) : prefix;
}

/** The real path of `file`, or `file` itself when it cannot be resolved. */
export function realpathOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}
