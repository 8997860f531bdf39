/**
 * The peers bench talks to nothing outside 127.0.0.0/8. This reads, from /proc (Linux), the TCP
 * and UDP sockets that given processes hold and lists those whose remote address is set and not a
 * loopback one — a check taken while the engines run, of the sockets open at that moment.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** Socket inodes the processes hold. */
function socketInodes(pids: number[]): Set<string> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone
    }
    for (const fd of fds) {
      try {
        const m = readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/);
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  }
  return inodes;
}

/** `hex` of /proc/net/tcp (little-endian IPv4 `0100007F`, or 32 hex digits of IPv6) as text. */
function address(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  const words = Array.from({ length: 4 }, (_, w) => hex.slice(w * 8, w * 8 + 8));
  const bytes = words.flatMap((w) => [3, 2, 1, 0].map((i) => w.slice(i * 2, i * 2 + 2)));
  const groups = Array.from({ length: 8 }, (_, g) => `${bytes[g * 2]}${bytes[g * 2 + 1]}`.replace(/^0+(?=.)/, ''));
  const text = groups.join(':').toLowerCase();
  const v4 = /^0:0:0:0:0:ffff:([0-9a-f]+):([0-9a-f]+)$/.exec(text);
  if (v4) {
    const n = (parseInt(v4[1], 16) << 16) | parseInt(v4[2], 16);
    return `::ffff:${[24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.')}`;
  }
  return text;
}

function isLoopbackOrUnset(addr: string): boolean {
  return (
    addr.startsWith('127.') ||
    addr.startsWith('::ffff:127.') ||
    addr === '0:0:0:0:0:0:0:1' ||
    addr === '0.0.0.0' ||
    addr === '0:0:0:0:0:0:0:0' ||
    addr === '::ffff:0.0.0.0'
  );
}

/** Remote `address:port`s, other than loopback ones, of the sockets `pids` hold now. */
export function nonLoopbackPeers(pids: number[]): string[] {
  const inodes = socketInodes(pids);
  const out = new Set<string>();
  for (const file of ['tcp', 'tcp6', 'udp', 'udp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9])) continue;
      const [hex, port] = f[2].split(':');
      const addr = address(hex);
      if (!isLoopbackOrUnset(addr)) out.add(`${addr}:${parseInt(port, 16)} (${file})`);
    }
  }
  return [...out];
}
