import { describe, expect, it } from '@jest/globals';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { publish, startE2E, waitRun } from '../support/e2e-platform.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
}

/** A local HTTP server recording what it receives: OTLP/JSON trace exports, or a node's requests. */
async function recorder() {
  const bodies: string[] = [];
  const headers: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      headers.push({ path: req.url ?? '/', headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    headers,
    spans(): OtlpSpan[] {
      return bodies.flatMap((b) => (JSON.parse(b).resourceSpans ?? []).flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)));
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

describe('traces', () => {
  it('exports a run span continuing the caller’s trace, an attempt span per task with execute and report, and sends traceparent on HTTP nodes', async () => {
    const collector = await recorder();
    const service = await recorder();
    const e2e = await startE2E({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.base });
    try {
      const { client, apiKey } = await e2e.tenant('traced');
      await publish(client, 'traced', {
        nodes: [
          { node_id: 'a', type: 'HTTP', spec: { url: `${service.base}/a` } },
          { node_id: 'b', type: 'HTTP', spec: { url: `${service.base}/b` } },
        ],
        edges: [{ from: 'a', to: 'b' }],
      });
      const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
      const callerSpan = '00f067aa0ba902b7';
      const res = await fetch(e2e.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, traceparent: `00-${callerTrace}-${callerSpan}-01` },
        body: JSON.stringify({ query: 'mutation { startRun(input: { workflowId: "traced" }) { id } }' }),
      });
      const runId = ((await res.json()) as any).data.startRun.id as string;
      expect((await waitRun(client, runId)).status).toBe('SUCCEEDED');
      await e2e.close(); // flushes the spans still batched

      const spans = collector.spans();
      const run = spans.filter((s) => s.name === 'run traced');
      expect(run).toHaveLength(1);
      expect(run[0]).toMatchObject({ traceId: callerTrace, parentSpanId: callerSpan });
      expect(attr(run[0]!, 'weft.run_id')).toBe(runId);
      expect(attr(run[0]!, 'weft.status')).toBe('SUCCEEDED');

      for (const node of ['a', 'b']) {
        const task = spans.filter((s) => s.name === `task ${node}`);
        expect(task).toHaveLength(1);
        expect(task[0]).toMatchObject({ traceId: callerTrace, parentSpanId: run[0]!.spanId });
        expect(attr(task[0]!, 'weft.attempt')).toBe(1);
        expect(attr(task[0]!, 'weft.outcome')).toBe('succeeded');
        const children = spans
          .filter((s) => s.parentSpanId === task[0]!.spanId)
          .map((s) => s.name)
          .sort();
        expect(children).toEqual(['execute', 'report']);
        const execute = spans.find((s) => s.parentSpanId === task[0]!.spanId && s.name === 'execute')!;
        // The node's request carries the execute span as its parent.
        expect(service.headers.find((h) => h.path === `/${node}`)?.headers.traceparent).toBe(`00-${callerTrace}-${execute.spanId}-01`);
      }
      expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([callerTrace]));
    } finally {
      await collector.close();
      await service.close();
    }
  });
});
