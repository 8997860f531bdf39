import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny order service for the demo and tests, on loopback: `GET /orders/:id` answers
 * `{order_id, total, items}`; ids >= 2000 are large orders (total 4200), others total 250.
 * `GET /flaky/:key?fail=N` fails N times per key with 503, then answers `{ok: true, calls}`.
 * `POST /verify` with `{employer: {name, note?}}` (examples/employer-fanout.yaml) answers one
 * employment check's delta `{failures, messages, checked}`: Acme, Globex and Initech are known.
 */
/** The employers `POST /verify` knows. */
const VERIFIED_EMPLOYERS = ['Acme', 'Globex', 'Initech'];

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
    if (url.pathname === '/verify' && req.method === 'POST') {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        let employer: { name?: unknown; note?: unknown } = {};
        try {
          employer = (JSON.parse(raw) as { employer?: typeof employer }).employer ?? {};
        } catch {
          return send(400, { error: 'body must be JSON {employer: {name, note?}}' });
        }
        const name = String(employer.name ?? '');
        const known = VERIFIED_EMPLOYERS.includes(name);
        const messages = [...(known ? [] : [`${name}: employment could not be verified`]), ...(employer.note ? [`${name}: ${String(employer.note)}`] : [])];
        send(200, { failures: known ? 0 : 1, messages: messages.length ? messages : null, checked: [name] });
      });
      return;
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${actual}`, server, calls };
}

// `node dist/examples/demo/order-service.js [--port N]` runs it on its own (default port 4100),
// for trying examples/order-flow.yaml (and employer-fanout.yaml, order-with-payment.yaml) by hand.
if (process.argv[1]?.endsWith('order-service.js')) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 4100;
  startOrderService(port).then(({ url }) => process.stdout.write(`demo order service at ${url} (orders >= 2000 are large)\n`));
}
