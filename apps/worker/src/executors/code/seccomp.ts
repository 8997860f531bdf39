/**
 * The seccomp filter bubblewrap installs for every CODE execution (`bwrap --seccomp FD`), as a
 * classic BPF program built here: the few system calls an execution must not make, for the
 * worker's own architecture.
 *
 * - `add_key`, `request_key`, `keyctl` fail with EPERM: the kernel's per-uid keyrings live outside
 *   every namespace, so keys an execution stored would wait there for the next execution on the
 *   same uid, across worker restarts.
 * - `unshare` and `clone` with CLONE_NEWUSER fail with EPERM, and `clone3` (whose flags a filter
 *   cannot read) with ENOSYS, so that C libraries fall back to `clone`: no user namespace inside
 *   the sandbox, where the code would hold every capability over new mount, pid and network
 *   namespaces (and a larger kernel surface).
 * - `socket` and `socketpair` take an allowlist of address families: `socket` AF_UNIX, AF_INET and
 *   AF_INET6, `socketpair` AF_UNIX (the only family it works for); any other fails with
 *   EAFNOSUPPORT, as for a family the kernel was built without. The network namespace holds only
 *   loopback for AF_INET and AF_INET6, but other families are not namespaced (AF_VSOCK reaches the
 *   hypervisor's host services from a VM) or open kernel interfaces no handler needs (AF_NETLINK,
 *   AF_PACKET, AF_ALG, AF_BLUETOOTH…).
 * - `io_uring_setup`, `io_uring_enter`, `io_uring_register`, `userfaultfd`, `bpf` and
 *   `perf_event_open` fail with EPERM: large kernel surfaces, a source of privilege escalations,
 *   that no handler needs. libuv (Node) and the C libraries treat EPERM from `io_uring_setup` as
 *   "not available" and use their thread pool. (`/dev/userfaultfd` is not among the sandbox's
 *   devices.)
 * - Any other ABI (i386 `int 0x80`, x32 on x86-64) fails with ENOSYS: its system call numbers
 *   differ, and would pass the checks above unseen.
 */

/** Syscall numbers of one architecture, and its AUDIT_ARCH value. */
interface Abi {
  auditArch: number;
  keyring: number[];
  unshare: number;
  clone: number;
  clone3: number;
  socket: number;
  socketpair: number;
  /** io_uring_setup, io_uring_enter, io_uring_register, userfaultfd, bpf, perf_event_open. */
  denied: number[];
  /** Numbers at or above this belong to another ABI on the same arch (x32), or none. */
  foreignFrom?: number;
}

const ABIS: Partial<Record<NodeJS.Architecture, Abi>> = {
  // asm/unistd_64.h
  x64: {
    auditArch: 0xc000003e,
    keyring: [248, 249, 250],
    unshare: 272,
    clone: 56,
    clone3: 435,
    socket: 41,
    socketpair: 53,
    denied: [425, 426, 427, 323, 321, 298],
    foreignFrom: 0x40000000,
  },
  // asm-generic/unistd.h
  arm64: {
    auditArch: 0xc00000b7,
    keyring: [217, 218, 219],
    unshare: 97,
    clone: 220,
    clone3: 435,
    socket: 198,
    socketpair: 199,
    denied: [425, 426, 427, 282, 280, 241],
  },
};

/** Address families `socket` may open: AF_UNIX, AF_INET, AF_INET6. */
export const SOCKET_FAMILIES = [1, 2, 10];
/** Address families `socketpair` may open: AF_UNIX. */
export const SOCKETPAIR_FAMILIES = [1];

const CLONE_NEWUSER = 0x10000000;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;

// BPF opcodes (linux/filter.h, linux/seccomp.h).
export const LD_W_ABS = 0x20;
export const JEQ_K = 0x15;
export const JGE_K = 0x35;
export const JSET_K = 0x45;
export const RET_K = 0x06;
export const RET_ALLOW = 0x7fff0000;
export const RET_ERRNO = 0x00050000;
// struct seccomp_data offsets (the low half of arg0 on a little-endian machine, as x64 and arm64 run).
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

type Insn = { code: number; k: number; jt?: string; jf?: string; label?: string };

/**
 * The filter for `arch` (default: this process's), as the bytes of a `struct sock_filter` array
 * in this machine's byte order; undefined for an architecture it does not know.
 */
export function seccompFilter(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const abi = ABIS[arch];
  if (!abi) return undefined;
  const program: Insn[] = [
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: abi.auditArch, jf: 'enosys' },
    { code: LD_W_ABS, k: NR },
    ...(abi.foreignFrom !== undefined ? [{ code: JGE_K, k: abi.foreignFrom, jt: 'enosys' }] : []),
    ...[...abi.keyring, ...abi.denied].map((nr) => ({ code: JEQ_K, k: nr, jt: 'eperm' })),
    { code: JEQ_K, k: abi.clone3, jt: 'enosys' },
    { code: JEQ_K, k: abi.unshare, jt: 'flags' },
    { code: JEQ_K, k: abi.clone, jt: 'flags' },
    { code: JEQ_K, k: abi.socket, jt: 'socket' },
    { code: JEQ_K, k: abi.socketpair, jt: 'socketpair' },
    { code: RET_K, k: RET_ALLOW },
    { label: 'flags', code: LD_W_ABS, k: ARG0_LOW },
    { code: JSET_K, k: CLONE_NEWUSER, jt: 'eperm' },
    { code: RET_K, k: RET_ALLOW },
    { label: 'socket', code: LD_W_ABS, k: ARG0_LOW },
    ...SOCKET_FAMILIES.map((family) => ({ code: JEQ_K, k: family, jt: 'allow' })),
    { code: RET_K, k: RET_ERRNO | EAFNOSUPPORT },
    { label: 'socketpair', code: LD_W_ABS, k: ARG0_LOW },
    ...SOCKETPAIR_FAMILIES.map((family) => ({ code: JEQ_K, k: family, jt: 'allow' })),
    { code: RET_K, k: RET_ERRNO | EAFNOSUPPORT },
    { label: 'allow', code: RET_K, k: RET_ALLOW },
    { label: 'eperm', code: RET_K, k: RET_ERRNO | EPERM },
    { label: 'enosys', code: RET_K, k: RET_ERRNO | ENOSYS },
  ];
  return assemble(program);
}

/** Resolves labels into the relative jumps of classic BPF (skip counts after the instruction). */
function assemble(program: Insn[]): Buffer {
  const at = new Map<string, number>();
  program.forEach((insn, i) => insn.label && at.set(insn.label, i));
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const to = at.get(label);
    if (to === undefined || to <= from || to - from - 1 > 255) throw new Error(`seccomp: bad jump to ${label}`);
    return to - from - 1;
  };
  const out = Buffer.alloc(program.length * 8);
  const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  program.forEach((insn, i) => {
    const base = i * 8;
    if (little) out.writeUInt16LE(insn.code, base);
    else out.writeUInt16BE(insn.code, base);
    out.writeUInt8(offset(i, insn.jt), base + 2);
    out.writeUInt8(offset(i, insn.jf), base + 3);
    if (little) out.writeUInt32LE(insn.k >>> 0, base + 4);
    else out.writeUInt32BE(insn.k >>> 0, base + 4);
  });
  return out;
}
