/**
 * The DBOS Transact measurement of the peers bench: one Node process that is both the DBOS
 * application and the driver. Its workflow `chain` runs 20 `DBOS.runStep` calls one after the
 * other, each a GET to the stub, each checkpointed in the system database (`--database-url`, a
 * fresh database the orchestrator made and drops) before the next starts. No Conductor key and
 * no OTLP endpoint are given, tracing is off: DBOS then talks to PostgreSQL only. Writes its
 * result to `--out`.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { numberOption, onInterrupt } from '../../chaos/processes.js';
import { StubProcess } from '../peer-children.js';
import { Problems, checkCount, checkResults, checkStub } from '../peer-check.js';
import { getJson } from '../peer-http.js';
import { fromWorkload, runDriver, writeResult, type EngineResult } from '../peer-result.js';
import { nonLoopbackPeers } from '../peer-sockets.js';
import { CHAIN_STEPS, keyPrefix, runWorkload, type EngineDriver } from '../peer-workload.js';
import { PgCounters } from '../stats.js';
import { packageVersion } from './package-version.js';

const say = (l: string) => process.stdout.write(`dbos: ${l}\n`);

/** The PostgreSQL settings a checkpoint's durability depends on, as the server has them. */
async function pgDurability(client: pg.Client): Promise<string[]> {
  const show = async (name: string) => String(Object.values((await client.query(`SHOW ${name}`)).rows[0])[0]);
  return [
    `PostgreSQL ${await show('server_version')}: synchronous_commit = ${await show('synchronous_commit')}, fsync = ${await show('fsync')}, wal_sync_method = ${await show('wal_sync_method')}, full_page_writes = ${await show('full_page_writes')} (SHOW, the server's own settings; the bench changes none)`,
    "each step's output is written to dbos.operation_outputs (one insert, committed) before DBOS.runStep returns and the next step starts; source: @dbos-inc/dbos-sdk dist/src/dbos-executor.js, the step awaits systemDatabase.recordOperationResult",
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'database-url': { type: 'string' }, work: { type: 'string' }, out: { type: 'string' }, seconds: { type: 'string' }, 'solo-runs': { type: 'string' } },
  });
  if (!values['database-url'] || !values.work || !values.out) {
    throw new Error('usage: dbos-driver.js --database-url <postgres url> --work <dir> --out <file> --seconds S --solo-runs N');
  }
  const seconds = numberOption('seconds', values.seconds, 1);
  const soloRuns = Math.floor(numberOption('solo-runs', values['solo-runs'], 1));
  const url = values['database-url'];
  const dbName = new URL(url).pathname.slice(1);
  const interrupted = onInterrupt('dbos', (l) => process.stdout.write(`${l}\n`));
  const parent = process.ppid;
  const version = packageVersion('@dbos-inc/dbos-sdk');

  let stub: StubProcess | undefined;
  const client = new pg.Client({ connectionString: url, application_name: 'weft-peers-bench' });
  let launched = false;
  try {
    stub = await StubProcess.start(join(values.work, 'dbos-stub.log'));
    const stubUrl = stub.url;
    await client.connect();
    const durability = await pgDurability(client);
    const counters = new PgCounters(client, dbName, 'postgres', false);

    const chain = DBOS.registerWorkflow(
      async (key: string): Promise<unknown[]> => {
        const bodies: unknown[] = [];
        for (let i = 1; i <= CHAIN_STEPS; i++) {
          bodies.push(await DBOS.runStep(async () => (await getJson(`${stubUrl}/n${i}?wf=${encodeURIComponent(key)}`)) as Record<string, string>, { name: `n${i}` }));
        }
        return bodies;
      },
      { name: 'chain' },
    );
    DBOS.setConfig({ name: 'weft-peers', systemDatabaseUrl: url, enableOTLP: false, tracingEnabled: false, logLevel: 'warn' });
    await DBOS.launch();
    launched = true;
    say(`DBOS Transact ${version} launched (pid ${process.pid}) on database ${dbName}; stub ${stubUrl}`);

    let outside: string[] = [];
    const st = stub;
    const driver: EngineDriver = {
      async run(key) {
        const handle = await DBOS.startWorkflow(chain, { workflowID: key })(key);
        return { bodies: await handle.getResult() };
      },
      async processes() {
        outside = [...new Set([...outside, ...nonLoopbackPeers([process.pid])])];
        return new Map([
          ['DBOS app + driver (node)', [process.pid]],
          ['postgres (this db + background)', await counters.backendPids()],
          ['stub (node)', st.pid ? [st.pid] : []],
        ]);
      },
      afterWarmup: async () => {
        await client.query('ANALYZE');
      },
      check() {
        if (interrupted() || process.ppid !== parent) throw new Error('interrupted');
      },
    };
    const w = await runWorkload(driver, { seconds, soloRuns, prefix: keyPrefix('dbos'), say });
    await DBOS.shutdown();
    launched = false;

    // Checks, outside every timed phase.
    const p = new Problems();
    checkResults(w.records, p);
    const counts = await stub.counts(w.window.from, w.window.to);
    checkStub(w.records, counts, p);
    const ok = w.records.filter((r) => !r.error).length;
    const statuses = (await client.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM dbos.workflow_status GROUP BY status`)).rows;
    checkCount('workflows in status SUCCESS (dbos.workflow_status)', ok, statuses.filter((r) => r.status === 'SUCCESS').reduce((s, r) => s + r.n, 0), p);
    for (const r of statuses.filter((x) => x.status !== 'SUCCESS')) p.add(`dbos.workflow_status holds ${r.n} workflow(s) in status ${r.status}`);
    const steps = (
      await client.query<{ n: number; own: number }>(
        `SELECT count(*)::int AS n,
                count(*) FILTER (WHERE error IS NULL AND (output::jsonb #>> '{json,wf}') = workflow_uuid AND (output::jsonb #>> '{json,step}') = function_name)::int AS own
           FROM dbos.operation_outputs`,
      )
    ).rows[0];
    checkCount('step outputs (dbos.operation_outputs rows)', ok * CHAIN_STEPS, steps.n, p);
    checkCount("step outputs naming their own workflow and step (dbos.operation_outputs.output = the stub's body)", ok * CHAIN_STEPS, steps.own, p);
    const inWindow = (
      await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM dbos.operation_outputs WHERE completed_at_epoch_ms >= $1 AND completed_at_epoch_ms < $2`, [
        Math.floor(w.window.from),
        Math.floor(w.window.to),
      ])
    ).rows[0].n;
    if (outside.length) p.add(`the DBOS process held sockets to addresses outside 127.0.0.0/8: ${outside.join(', ')}`);

    const result: EngineResult = {
      engine: 'DBOS',
      version: `@dbos-inc/dbos-sdk ${version}`,
      setup: [
        `one node process: the DBOS application (default settings: LISTEN/NOTIFY, its own pool) and the driver, which starts each workflow with DBOS.startWorkflow(chain, {workflowID: key}) and awaits getResult(); system database ${dbName} on the local PostgreSQL`,
        'steps are DBOS.runStep calls doing GET <stub>/n<i>?wf=<key> (node:http, keep-alive); no Conductor key, no OTLP endpoint, tracing off (enableOTLP: false, tracingEnabled: false), DBOS* environment variables cleared',
        `sockets to non-loopback addresses held by the DBOS process, read from /proc at both ends of the window: ${outside.length ? outside.join(', ') : 'none'}`,
      ],
      durability,
      notes: [],
      ...fromWorkload(w),
      windowSteps: inWindow,
      windowStepsSource: 'dbos.operation_outputs rows with completed_at_epoch_ms in the window',
      stubHitsInWindow: counts.inRange,
      checks: [
        `each workflow's result: the ${CHAIN_STEPS} stub bodies in order`,
        'the stub saw each (workflow, step) exactly once',
        `dbos.workflow_status: every workflow SUCCESS; dbos.operation_outputs: ${CHAIN_STEPS} rows per workflow, each output the stub's body for that workflow and step`,
      ],
      problems: p.done(),
    };
    writeResult(values.out, result);
  } finally {
    if (launched) await DBOS.shutdown().catch(() => undefined);
    await client.end().catch(() => undefined);
    await stub?.stop();
  }
}

runDriver('dbos', main);
