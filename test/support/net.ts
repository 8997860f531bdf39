import { get as httpGet } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on 127.0.0.1:`port` (polled for up to 30 s: room for a loaded machine). */
export async function waitForPort(port: number): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const open = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1', () => {
        c.end();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

/** GET `url` on a connection of its own (closed after the answer: no keep-alive left behind). */
export function get(url: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    }).on('error', reject);
  });
}
