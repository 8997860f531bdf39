/**
 * The HTTP client of the peers bench: JSON over node:http with one keep-alive agent, the way a
 * service calls a dependency. The peers' steps (a Restate `ctx.run`, a DBOS step) and the Restate
 * driver's ingress calls use it; Weft's worker calls the stub with its own undici client.
 */
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** A response: its status and its body parsed as JSON (or the raw text when it is not JSON). */
export interface JsonResponse {
  status: number;
  body: unknown;
  text: string;
}

/**
 * `method url` with `body` as JSON (when given), over a kept-alive connection.
 * @param timeoutMs the whole request, from sending to the last byte (default 60 s)
 * @throws Error naming the method and URL on a network error or a timeout
 */
export function requestJson(method: string, url: string, body?: unknown, timeoutMs = 60_000): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        agent,
        headers:
          payload === undefined
            ? { accept: 'application/json' }
            : { accept: 'application/json', 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new Error(`${method} ${url}: ${err.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: the text stands
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`${method} ${url}: ${err.message}`)));
    req.end(payload);
  });
}

/**
 * GET `url` and its JSON body.
 * @throws Error with the status and the start of the body when the status is not 200
 */
export async function getJson(url: string): Promise<unknown> {
  const r = await requestJson('GET', url);
  if (r.status !== 200) throw new Error(`GET ${url}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
  return r.body;
}
