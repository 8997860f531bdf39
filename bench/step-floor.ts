/**
 * The floor probe of `bench:fairness`: the least work a durable two-step run does — a commit that
 * creates the run, then per step one call to the stub and one commit that records it — with no
 * engine, no queue and no worker hop, in a Node process of its own beside the installation. Run
 * idle and under tenant A's flood, its ms per step tells how much of a quiet tenant's slowdown
 * the machine's contention alone imposes (CPU, the database's commits, the stub's event loop),
 * below which no dispatch order can go.
 *
 * Started by {@link FloorProbe.start} with `fork`; the parent sends `{ run: true }` to start a
 * probe run every `intervalMs` and `{ run: false }` to stop, and gets back `{ perStepMs }` for the
 * runs since the last start, once the last of them ended. Talks to 127.0.0.1 only (the parent
 * checked both addresses).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** Steps of a probe run, as the bench's pair runs have. */
const STEPS = 2;

/** The parent's side: the probe process and its phases. */
export class FloorProbe {
  private constructor(private readonly child: ChildProcess) {}

  /** Forks the probe against database `dbUrl` (as its owner) and `stubUrl`; resolves once it is connected. */
  static async start(dbUrl: string, stubUrl: string, intervalMs: number): Promise<FloorProbe> {
    const child = fork(fileURLToPath(import.meta.url), [dbUrl, stubUrl, String(intervalMs)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the floor probe exited with code ${code}`)));
    });
    return new FloorProbe(child);
  }

  /** Starts a probe run every interval until {@link stop}. */
  run(): void {
    this.child.send({ run: true });
  }

  /** Stops starting runs; resolves each run's ms per step since {@link run}, once all ended. */
  stop(): Promise<number[]> {
    return new Promise((resolve) => {
      this.child.once('message', (m: { perStepMs: number[] }) => resolve(m.perStepMs));
      this.child.send({ run: false });
    });
  }

  close(): void {
    this.child.kill();
  }
}

/** The probe process itself. */
async function probe(dbUrl: string, stubUrl: string, intervalMs: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: dbUrl, max: 4, application_name: 'bench:fairness floor probe' });
  await pool.query(`CREATE TABLE IF NOT EXISTS bench_floor_runs (id bigserial PRIMARY KEY, step int NOT NULL DEFAULT 0, finished_at timestamptz)`);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const call = (i: number) =>
    new Promise<void>((resolve, reject) => {
      request(`${stubUrl}/floor/${i}`, { agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
  const once = async (): Promise<number> => {
    const t0 = performance.now();
    const { rows } = await pool.query<{ id: string }>(`INSERT INTO bench_floor_runs DEFAULT VALUES RETURNING id`);
    for (let s = 1; s <= STEPS; s++) {
      await call(s);
      await pool.query(`UPDATE bench_floor_runs SET step = $2, finished_at = CASE WHEN $2 = ${STEPS} THEN now() END WHERE id = $1`, [rows[0]!.id, s]);
    }
    return (performance.now() - t0) / STEPS;
  };
  let timer: NodeJS.Timeout | undefined;
  let runs: Promise<number>[] = [];
  process.on('message', (m: { run: boolean }) => {
    if (m.run) {
      runs = [];
      timer = setInterval(() => runs.push(once()), intervalMs);
      return;
    }
    clearInterval(timer);
    void Promise.all(runs).then((perStepMs) => process.send!({ perStepMs }));
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ ready: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dbUrl, stubUrl, interval] = process.argv.slice(2);
  probe(dbUrl!, stubUrl!, Number(interval)).catch((err: unknown) => {
    process.stderr.write(`floor probe: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
