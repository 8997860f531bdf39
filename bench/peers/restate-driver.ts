/**
 * The Restate measurement of the peers bench, run by the orchestrator inside a network namespace
 * that has only loopback (`unshare --net`): Restate checks for a newer release when it starts,
 * and nothing here may reach past 127.0.0.0/8. It starts the stub, `restate-server` (default
 * configuration, data in `--work`), the SDK service (restate-service.js) and registers it, then
 * drives the workload through the ingress (`POST /chain/run`), checks every workflow and the
 * server's own tables (`POST /query` on the admin API), and writes its result to `--out`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { numberOption, onInterrupt } from '../../chaos/processes.js';
import { Child, StubProcess } from '../peer-children.js';
import { Problems, checkCount, checkResults, checkStub } from '../peer-check.js';
import { requestJson } from '../peer-http.js';
import { fromWorkload, runDriver, writeResult, type EngineResult } from '../peer-result.js';
import { CHAIN_STEPS, keyPrefix, runWorkload, type EngineDriver } from '../peer-workload.js';
import { packageVersion } from './package-version.js';
import { INGRESS_URL, RestateServer, durabilitySettings } from './restate-server.js';

const SERVICE_PORT = 9080;
const say = (l: string) => process.stdout.write(`restate: ${l}\n`);

/** Interfaces of this process's network namespace (from /proc/self/net/dev). */
function interfaces(): string[] {
  return readFileSync('/proc/self/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((l) => l.split(':')[0].trim())
    .filter(Boolean);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { work: { type: 'string' }, out: { type: 'string' }, seconds: { type: 'string' }, 'solo-runs': { type: 'string' } } });
  if (!values.work || !values.out) throw new Error('usage: restate-driver.js --work <dir> --out <file> --seconds S --solo-runs N');
  const seconds = numberOption('seconds', values.seconds, 1);
  const soloRuns = Math.floor(numberOption('solo-runs', values['solo-runs'], 1));
  const nics = interfaces();
  if (nics.some((n) => n !== 'lo')) {
    throw new Error(`the Restate driver must run in a network namespace with only loopback (unshare --net); this one has ${nics.join(', ')}`);
  }
  const work = values.work;
  const dataDir = join(work, 'restate-data');
  mkdirSync(dataDir, { recursive: true });
  const interrupted = onInterrupt('restate', (l) => process.stdout.write(`${l}\n`));
  const parent = process.ppid;
  let serviceDied = '';
  const here = dirname(fileURLToPath(import.meta.url));

  let stub: StubProcess | undefined;
  let server: RestateServer | undefined;
  let service: Child | undefined;
  try {
    stub = await StubProcess.start(join(work, 'restate-stub.log'));
    const durability = await durabilitySettings();
    server = await RestateServer.start(dataDir, join(work, 'restate-server.log'));
    const version = await server.version();
    service = new Child('restate-service', process.execPath, [join(here, 'restate-service.js'), '--port', String(SERVICE_PORT), '--stub', stub.url], join(work, 'restate-service.log')).start();
    service.exited.then((e) => (serviceDied = `the SDK service exited (code ${e.code}, signal ${e.signal}); see ${service!.logFile}`)).catch(() => undefined);
    const deployment = await server.register(`http://127.0.0.1:${SERVICE_PORT}`);
    const sdk = packageVersion('@restatedev/restate-sdk');
    say(`restate-server ${version} (pid ${server.pid}), SDK ${deployment.sdk} (pid ${service.pid}), stub ${stub.url}; network namespace with only loopback`);

    const srv = server;
    const svc = service;
    const st = stub;
    const driver: EngineDriver = {
      async run(key) {
        const r = await requestJson('POST', `${INGRESS_URL}/chain/run`, { key });
        if (r.status !== 200) throw new Error(`ingress answered HTTP ${r.status}: ${r.text.slice(0, 200)}`);
        return { bodies: r.body as unknown[] };
      },
      async processes() {
        return new Map([
          ['restate-server', srv.pid ? [srv.pid] : []],
          ['SDK service (node)', svc.pid ? [svc.pid] : []],
          ['driver (node)', [process.pid]],
          ['stub (node)', st.pid ? [st.pid] : []],
        ]);
      },
      check() {
        if (interrupted() || process.ppid !== parent) throw new Error('interrupted');
        if (serviceDied) throw new Error(serviceDied);
        if (!srv.child.running) throw new Error(`restate-server exited; see ${srv.child.logFile}:\n${srv.child.tail()}`);
      },
    };
    const w = await runWorkload(driver, { seconds, soloRuns, prefix: keyPrefix('restate'), say });

    // Checks, outside every timed phase.
    const p = new Problems();
    checkResults(w.records, p);
    const counts = await stub.counts(w.window.from, w.window.to);
    checkStub(w.records, counts, p);
    const ok = w.records.filter((r) => !r.error).length;
    const byStatus = await server.query<{ status: string; completion_result: string | null; n: number }>(
      `SELECT status, completion_result, count(*) AS n FROM sys_invocation WHERE target = 'chain/run' GROUP BY status, completion_result`,
    );
    const succeeded = byStatus.filter((r) => r.status === 'completed' && r.completion_result === 'success').reduce((s, r) => s + Number(r.n), 0);
    checkCount('invocations of chain/run completed with success (sys_invocation)', ok, succeeded, p);
    const others = byStatus.filter((r) => !(r.status === 'completed' && r.completion_result === 'success'));
    for (const r of others) p.add(`sys_invocation holds ${r.n} invocation(s) of chain/run in status ${r.status}/${r.completion_result ?? '-'}`);
    const runs = await server.query<{ n: number }>(`SELECT count(*) AS n FROM sys_journal WHERE entry_type = 'Command: Run'`);
    const results = await server.query<{ n: number }>(`SELECT count(*) AS n FROM sys_journal WHERE entry_type = 'Notification: Run'`);
    checkCount(`completed ctx.run steps (sys_journal 'Notification: Run' entries)`, ok * CHAIN_STEPS, Number(results[0]?.n ?? 0), p);
    checkCount(`ctx.run commands (sys_journal 'Command: Run' entries)`, ok * CHAIN_STEPS, Number(runs[0]?.n ?? 0), p);
    const inWindow = await server.query<{ n: number }>(
      `SELECT count(*) AS n FROM sys_journal WHERE entry_type = 'Notification: Run' AND appended_at >= to_timestamp_millis(${Math.floor(w.window.from)}) AND appended_at < to_timestamp_millis(${Math.floor(w.window.to)})`,
    );
    const protocol = await server.query<{ v: number | null }>(`SELECT max(pinned_service_protocol_version) AS v FROM sys_invocation WHERE target = 'chain/run'`);

    const result: EngineResult = {
      engine: 'Restate',
      version: `restate-server ${version}, @restatedev/restate-sdk ${sdk}`,
      setup: [
        `restate-server (one node, all roles, default configuration; data in a temporary folder), the SDK service (node, service protocol v${protocol[0]?.v ?? '?'} of the deployment's v${deployment.min}–v${deployment.max}), the driver and the stub, all inside a network namespace with only loopback (unshare --net; Restate checks for a newer release at start)`,
        `workflows invoked through the HTTP ingress (POST ${INGRESS_URL}/chain/run, the call returns when the invocation completed); steps are ctx.run calls doing GET <stub>/n<i>?wf=<key> (node:http, keep-alive)`,
      ],
      durability,
      notes: [],
      ...fromWorkload(w),
      windowSteps: Number(inWindow[0]?.n ?? 0),
      windowStepsSource: `sys_journal 'Notification: Run' entries appended in the window`,
      stubHitsInWindow: counts.inRange,
      checks: [
        `each invocation's result: the ${CHAIN_STEPS} stub bodies in order`,
        'the stub saw each (workflow, step) exactly once',
        `sys_invocation: every chain/run invocation completed with success; sys_journal: ${CHAIN_STEPS} 'Command: Run' and ${CHAIN_STEPS} 'Notification: Run' entries per workflow`,
      ],
      problems: p.done(),
    };
    writeResult(values.out, result);
  } finally {
    await service?.stop(10_000);
    await server?.stop();
    await stub?.stop();
  }
}

runDriver('restate', main);
