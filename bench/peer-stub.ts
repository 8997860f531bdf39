/**
 * The stub every engine of the peers bench calls, as a process of its own so that its CPU is
 * counted apart: node:http on 127.0.0.1 (port `--port`, default any free one). It answers
 * `GET /n<i>?wf=<key>` with 200 and `{"wf":"<key>","step":"n<i>"}`, counts the hits per
 * (workflow, step) and keeps each hit's time (epoch ms). `GET /_counts?from=<ms>&to=<ms>` answers
 * `{"counts": {"<key>": {"n<i>": hits}}, "hits": all, "inRange": hits with from <= t < to}`.
 * It prints `stub listening on <url>` once it listens, and stops on SIGTERM or SIGINT.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const STEP = /^\/(n\d+)$/;

function main(): void {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
  const counts = new Map<string, Map<string, number>>();
  const times: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://stub');
    const step = STEP.exec(url.pathname)?.[1];
    const wf = url.searchParams.get('wf');
    if (req.method === 'GET' && step && wf !== null) {
      times.push(Date.now());
      let perWf = counts.get(wf);
      if (!perWf) counts.set(wf, (perWf = new Map()));
      perWf.set(step, (perWf.get(step) ?? 0) + 1);
      const body = JSON.stringify({ wf, step });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    if (req.method === 'GET' && url.pathname === '/_counts') {
      const from = Number(url.searchParams.get('from') ?? -Infinity);
      const to = Number(url.searchParams.get('to') ?? Infinity);
      const out: Record<string, Record<string, number>> = {};
      for (const [k, steps] of counts) out[k] = Object.fromEntries(steps);
      const body = JSON.stringify({ counts: out, hits: times.length, inRange: times.filter((t) => t >= from && t < to).length });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`no such path: ${req.method} ${url.pathname} (GET /n<i>?wf=<key> or /_counts)\n`);
  });
  server.keepAliveTimeout = 30_000;
  server.listen(Number(values.port), '127.0.0.1', () => {
    process.stdout.write(`stub listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  const stop = () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main();
