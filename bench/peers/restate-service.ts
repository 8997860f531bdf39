/**
 * The Restate service of the peers bench, a process of its own: the SDK's HTTP/2 endpoint on port
 * `--port` (inside the bench's network namespace, which has only loopback). `chain/run` takes
 * `{key}` and runs 20 `ctx.run('n<i>', GET <stub>/n<i>?wf=<key>)` one after the other, each
 * journaled by the server before the next starts, and returns the 20 bodies.
 */
import * as restate from '@restatedev/restate-sdk';
import { parseArgs } from 'node:util';
import { getJson } from '../peer-http.js';
import { CHAIN_STEPS } from '../peer-workload.js';

const { values } = parseArgs({ options: { port: { type: 'string' }, stub: { type: 'string' } } });
if (!values.port || !values.stub) throw new Error('usage: restate-service.js --port <n> --stub <url>');
const stub = values.stub;

const chain = restate.service({
  name: 'chain',
  handlers: {
    run: async (ctx: restate.Context, input: { key: string }): Promise<unknown[]> => {
      const bodies: unknown[] = [];
      for (let i = 1; i <= CHAIN_STEPS; i++) {
        bodies.push(await ctx.run(`n${i}`, async () => (await getJson(`${stub}/n${i}?wf=${encodeURIComponent(input.key)}`)) as Record<string, string>));
      }
      return bodies;
    },
  },
});

restate.serve({ services: [chain], port: Number(values.port) });
