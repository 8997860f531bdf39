import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny order service for the demo and tests, on loopback: `GET /orders/:id` answers
 * `{order_id, total, items}`; ids >= 2000 are large orders (total 4200), others total 250.
 * `GET /flaky/:key?fail=N` fails N times per key with 503, then answers `{ok: true, calls}`.
 */
export async function startOrderService(port = 0): Promise<{ url: string; server: Server; calls: Map<string, number> }> {
  const calls = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const order = url.pathname.match(/^\/orders\/([\w-]+)$/);
    if (order) {
      const id = order[1];
      const large = Number(id) >= 2000;
      return send(200, { order_id: id, total: large ? 4200 : 250, items: large ? ['forklift'] : ['pallet'] });
    }
    const flaky = url.pathname.match(/^\/flaky\/([\w-]+)$/);
    if (flaky) {
      const n = (calls.get(flaky[1]) ?? 0) + 1;
      calls.set(flaky[1], n);
      const fail = Number(url.searchParams.get('fail') ?? 0);
      return n <= fail ? send(503, { error: 'try again', calls: n }) : send(200, { ok: true, calls: n });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${actual}`, server, calls };
}

// `node dist/examples/demo/order-service.js [--port N]` runs it on its own (default port 4100),
// for trying examples/order-flow.yaml by hand.
if (process.argv[1]?.endsWith('order-service.js')) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 4100;
  startOrderService(port).then(({ url }) => process.stdout.write(`demo order service at ${url} (orders >= 2000 are large)\n`));
}
