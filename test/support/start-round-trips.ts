/**
 * Counts what one `startRun` costs against PostgreSQL, phase by phase, as the API pays it:
 * authenticating the key, the start's transaction, what follows its commit, and reading the run
 * for the answer. Not a bench (no timing): every message a pg client sends is recorded, with the
 * statements it holds (a message may hold several, `BEGIN; set_config(…); EXECUTE …`).
 *
 * `node --import ./test/support/ts-register.mjs test/support/start-round-trips.ts` (`N=…` starts
 * per case, 20 by default; `SHOW=1` prints the start's messages). `auth` is a request's key
 * lookup, `start` the start's transaction and what follows its commit (the fair-dispatch pass),
 * `answer` reading the run back for startRun's answer. Connections are warmed first, so
 * statements they prepared run as `EXECUTE`, as in a process that has served for a while.
 */
import pg from 'pg';
import { RunCoordinator } from '@weft/engine/coordinator';
import { RunRepository, TenantRepository } from '@weft/persistence';
import { AuthService } from '../../apps/api/src/auth/auth.service.js';
import { RunsService } from '../../apps/api/src/runs/runs.service.js';
import { createTestDatabase } from './test-database.js';
import { createTenant, def, http, publishWorkflow, RecordingDispatcher, RecordingPublisher } from './builders.js';

type Phase = 'auth' | 'start' | 'answer';
const counts = new Map<Phase, { messages: number; statements: number; unnamed: number }>();
let phase: Phase | undefined;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (phase) {
    const c = counts.get(phase) ?? { messages: 0, statements: 0, unnamed: 0 };
    const q = args[0] as string | { text: string; name?: string };
    c.messages++;
    if (typeof q === 'string') c.statements += q.split(/;\s*(?=BEGIN|select set_config|EXECUTE|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i).length;
    else c.statements++;
    if (typeof q === 'string' ? args.length > 1 : !q.name) c.unnamed++;
    counts.set(phase, c);
    if (process.env.SHOW && phase === 'start')
      console.log('    >', (typeof q === 'string' ? q : `[${q.name ?? 'unnamed'}] ${q.text}`).replace(/\s+/g, ' ').slice(0, 260));
  }
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

const db = await createTestDatabase();
try {
  const { tenantId, apiKey } = await createTenant(db.ds, 'measure');
  const coordinator = new RunCoordinator(db.ds, new RecordingDispatcher(), new RecordingPublisher(), {
    dispatchWindowFloor: 1_000_000,
    logger: { warn: () => {}, error: () => {} },
  });
  const auth = new AuthService(new TenantRepository(db.ds));
  const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
  const repo = new RunRepository(db.ds);
  const read = repo.findSizedRun.bind(repo);
  // The run read back for the answer: its own phase.
  repo.findSizedRun = async (...a: Parameters<typeof read>) => {
    const was = phase;
    if (phase) phase = 'answer';
    try {
      return await read(...a);
    } finally {
      phase = was;
    }
  };
  const runs = new RunsService(coordinator.runs, repo, undefined as never, undefined as never, undefined as never, { maxResponseBytes: 1 << 20 } as never);
  const measure = async (label: string, input: Record<string, unknown>) => {
    const N = Number(process.env.N ?? 20);
    for (let i = 0; i < 10; i++) await runs.start(await auth.authenticate(`Bearer ${apiKey}`), { workflowId, ...input } as never); // warm the connections' statements
    counts.clear();
    for (let i = 0; i < N; i++) {
      phase = 'auth';
      const p = await auth.authenticate(`Bearer ${apiKey}`);
      phase = 'start';
      await runs.start(p, { workflowId, ...input } as never);
      phase = undefined;
    }
    console.log(label);
    for (const k of ['auth', 'start', 'answer'] as Phase[]) {
      const v = counts.get(k) ?? { messages: 0, statements: 0, unnamed: 0 };
      console.log(
        `  ${k.padEnd(6)} ${(v.messages / N).toFixed(2)} round trips, ${(v.statements / N).toFixed(2)} statements, ${(v.unnamed / N).toFixed(2)} unnamed`,
      );
    }
  };
  await measure('new run (no idempotency key)', {});
  await measure('idempotent repeat', { idempotencyKey: 'same' });
} finally {
  pg.Client.prototype.query = query;
  await db.drop();
}
