import { describe, expect, it } from '@jest/globals';
import { JEQ_K, JGE_K, JSET_K, LD_W_ABS, RET_K, seccompFilter } from './seccomp.js';

/**
 * The assembled filter, run by a classic BPF interpreter over `struct seccomp_data` as the kernel
 * would: each case is a system call (number, architecture, arguments) and the verdict it gets.
 */

const AUDIT = { x64: 0xc000003e, i386: 0x40000003, arm64: 0xc00000b7, arm: 0x40000028 };
const ALLOW = 'allow';
const EPERM = 'errno 1';
const ENOSYS = 'errno 38';
const EAFNOSUPPORT = 'errno 97';

/** Runs `program` (little-endian `struct sock_filter` array) over one `struct seccomp_data`. */
function run(program: Buffer, nr: number, arch: number, args: number[] = []): string {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((arg, i) => data.writeBigInt64LE(BigInt(arg), 16 + i * 8));
  let a = 0;
  for (let pc = 0; pc < program.length / 8;) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    pc++;
    switch (code) {
      case LD_W_ABS:
        if (k % 4 !== 0 || k + 4 > data.length) throw new Error(`load out of seccomp_data at ${k}`);
        a = data.readUInt32LE(k);
        break;
      case JEQ_K:
        pc += a === k ? jt : jf;
        break;
      case JGE_K:
        pc += a >= k ? jt : jf;
        break;
      case JSET_K:
        pc += (a & k) !== 0 ? jt : jf;
        break;
      case RET_K:
        if (k === 0x7fff0000) return ALLOW;
        if ((k & 0xffff0000) === 0x00050000) return `errno ${k & 0xffff}`;
        return `ret ${k.toString(16)}`;
      default:
        throw new Error(`opcode ${code.toString(16)} the interpreter does not know`);
    }
  }
  throw new Error('fell off the end of the program');
}

const AF = { UNIX: 1, INET: 2, INET6: 10, NETLINK: 16, PACKET: 17, BLUETOOTH: 31, VSOCK: 40, ALG: 38, UNSPEC: 0 };

describe('the seccomp filter on x86-64', () => {
  const program = seccompFilter('x64')!;
  const x64 = (nr: number, ...args: number[]): string => run(program, nr, AUDIT.x64, args);

  it('lets socket open Unix, IPv4 and IPv6 sockets only; any other family is EAFNOSUPPORT', () => {
    expect(x64(41, AF.UNIX, 1, 0)).toBe(ALLOW);
    expect(x64(41, AF.INET, 1, 0)).toBe(ALLOW);
    expect(x64(41, AF.INET6, 2, 0)).toBe(ALLOW);
    for (const family of [AF.NETLINK, AF.PACKET, AF.BLUETOOTH, AF.VSOCK, AF.ALG, AF.UNSPEC, 45, 255]) {
      expect([family, x64(41, family, 1, 0)]).toEqual([family, EAFNOSUPPORT]);
    }
    // Only the low 32 bits are the family (an int): high bits set do not sneak a family through.
    expect(x64(41, 0x1_0000_0000 + AF.VSOCK, 1, 0)).toBe(EAFNOSUPPORT);
    expect(x64(41, 0x1_0000_0000 + AF.INET, 1, 0)).toBe(ALLOW);
  });

  it('lets socketpair open Unix pairs only', () => {
    expect(x64(53, AF.UNIX, 1, 0, 0)).toBe(ALLOW);
    expect(x64(53, AF.INET, 1, 0, 0)).toBe(EAFNOSUPPORT);
    expect(x64(53, AF.NETLINK, 1, 0, 0)).toBe(EAFNOSUPPORT);
    expect(x64(53, AF.VSOCK, 1, 0, 0)).toBe(EAFNOSUPPORT);
  });

  it('refuses io_uring, userfaultfd, bpf and perf_event_open with EPERM', () => {
    for (const nr of [425, 426, 427, 323, 321, 298]) expect([nr, x64(nr)]).toEqual([nr, EPERM]);
  });

  it('keeps refusing keyrings and user namespaces, and answers clone3 with ENOSYS', () => {
    for (const nr of [248, 249, 250]) expect(x64(nr)).toBe(EPERM);
    expect(x64(272, 0x10000000)).toBe(EPERM); // unshare(CLONE_NEWUSER)
    expect(x64(56, 0x10000000 | 0x11)).toBe(EPERM); // clone(CLONE_NEWUSER | SIGCHLD)
    expect(x64(272, 0x20000)).toBe(ALLOW); // unshare(CLONE_NEWNS): bwrap's own capabilities are gone, the kernel refuses it
    expect(x64(56, 0x11)).toBe(ALLOW); // fork
    expect(x64(435)).toBe(ENOSYS);
  });

  it('allows the system calls a runtime lives on', () => {
    // read, write, openat, mmap, epoll_wait, futex, execve, connect, bind, exit_group
    for (const nr of [0, 1, 257, 9, 232, 202, 59, 42, 49, 231]) expect([nr, x64(nr)]).toEqual([nr, ALLOW]);
  });

  it('refuses other ABIs: x32 numbers and i386 with ENOSYS', () => {
    expect(x64(0x40000000 + 41, AF.VSOCK)).toBe(ENOSYS);
    expect(x64(0x40000000 + 425)).toBe(ENOSYS);
    // i386 socketcall(SYS_SOCKET) and socket (359): another arch value, refused before any number.
    expect(run(program, 102, AUDIT.i386, [1, 0])).toBe(ENOSYS);
    expect(run(program, 359, AUDIT.i386, [AF.VSOCK, 1, 0])).toBe(ENOSYS);
  });
});

describe('the seccomp filter on arm64', () => {
  const program = seccompFilter('arm64')!;
  const arm64 = (nr: number, ...args: number[]): string => run(program, nr, AUDIT.arm64, args);

  it('uses the arm64 numbers for sockets, io_uring, userfaultfd, bpf and perf_event_open', () => {
    expect(arm64(198, AF.INET, 1, 0)).toBe(ALLOW);
    expect(arm64(198, AF.UNIX, 1, 0)).toBe(ALLOW);
    expect(arm64(198, AF.VSOCK, 1, 0)).toBe(EAFNOSUPPORT);
    expect(arm64(198, AF.NETLINK, 3, 0)).toBe(EAFNOSUPPORT);
    expect(arm64(199, AF.UNIX, 1, 0, 0)).toBe(ALLOW);
    expect(arm64(199, AF.INET6, 1, 0, 0)).toBe(EAFNOSUPPORT);
    for (const nr of [425, 426, 427, 282, 280, 241]) expect([nr, arm64(nr)]).toEqual([nr, EPERM]);
    for (const nr of [217, 218, 219]) expect(arm64(nr)).toBe(EPERM);
    expect(arm64(97, 0x10000000)).toBe(EPERM);
    expect(arm64(435)).toBe(ENOSYS);
    // x86-64's numbers mean other calls here: 41 is pivot_root, 323 and 321 are unassigned.
    expect(arm64(41, AF.VSOCK)).toBe(ALLOW);
    expect(arm64(63)).toBe(ALLOW); // read
  });

  it('refuses 32-bit ARM (compat) calls', () => {
    expect(run(program, 281, AUDIT.arm, [AF.VSOCK, 1, 0])).toBe(ENOSYS);
  });
});

it('has no filter for an architecture it does not know', () => {
  expect(seccompFilter('s390x')).toBeUndefined();
});
