import type { Command } from 'commander';
import { jsonOption, positiveInt, priority, readJsonOptions } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import { watchAndReport } from './run-watch.js';

const JSON_HELP = 'JSON, or @FILE to read it from a file (@- for stdin)';

/** Registers `run`, `signal`, `cancel` and `retry`: the commands that act on runs. */
export function runControlCommands(program: Command): void {
  withConnection(program.command('run <workflowId>'))
    .description('start a run')
    .option('--input <json>', `run input: ${JSON_HELP}`, jsonOption('--input'), {})
    .option('--config <json>', `run config: ${JSON_HELP}`, jsonOption('--config'))
    .option('--version <n>', "definition version (default: the workflow's default version)", positiveInt('--version'))
    .option('--idempotency-key <key>', 'return the existing run for a repeated key')
    .option('--priority <n>', "dispatch priority of the run's tasks, 1 (first) to 5 (default: the definition's, else 3)", priority)
    .option('--watch', 'stream task progress until the run ends (exit code 3 unless it succeeds)')
    .action(async (workflowId: string, o: ConnectionFlags & { input: unknown; config?: unknown; version?: number; idempotencyKey?: string; priority?: number; watch?: boolean }) => {
      const { input, config } = await readJsonOptions({ input: o.input, config: o.config });
      await withClient(o, async (c) => {
        const r = await c.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id status workflowId version } }`, {
          i: { workflowId, input, config, version: o.version, idempotencyKey: o.idempotencyKey, priority: o.priority },
        });
        process.stdout.write(`run ${r.startRun.id} ${r.startRun.status}\n`);
        if (o.watch) await watchAndReport(c, r.startRun);
      });
    });

  withConnection(program.command('signal <runId> <name>'))
    .description('send a signal to a run')
    .option('--payload <json>', `signal payload: ${JSON_HELP}`, jsonOption('--payload'))
    .action(async (runId: string, name: string, o: ConnectionFlags & { payload?: unknown }) => {
      const { payload } = await readJsonOptions({ payload: o.payload });
      const r = await withClient(o, (c) =>
        c.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name, payload } }),
      );
      process.stdout.write(r.sendSignal.delivered ? 'delivered\n' : 'buffered (no node is waiting for it yet)\n');
    });

  withConnection(program.command('cancel <runId>'))
    .description('cancel a run')
    .option('--reason <text>', 'why')
    .action(async (runId: string, o: ConnectionFlags & { reason?: string }) => {
      const r = await withClient(o, (c) => c.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id status } }`, { i: { runId, reason: o.reason } }));
      process.stdout.write(`run ${r.cancelRun.id} ${r.cancelRun.status}\n`);
    });

  withConnection(program.command('retry <runId>'))
    .description('retry a run from a node (that node and its descendants are reset)')
    .requiredOption('--from <nodeId>', 'node to restart from')
    .option('--input <json>', `new run input: ${JSON_HELP}`, jsonOption('--input'))
    .option('--config <json>', `new run config: ${JSON_HELP}`, jsonOption('--config'))
    .option('--version <n>', "definition version to continue on (default the run's)", positiveInt('--version'))
    .option('--watch', 'stream task progress until the run ends (exit code 3 unless it succeeds)')
    .action(async (runId: string, o: ConnectionFlags & { from: string; input?: unknown; config?: unknown; version?: number; watch?: boolean }) => {
      const { input, config } = await readJsonOptions({ input: o.input, config: o.config });
      await withClient(o, async (c) => {
        const r = await c.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id status workflowId version } }`, {
          i: { runId, fromNodeId: o.from, input, config, version: o.version },
        });
        process.stdout.write(`run ${r.retryRun.id} ${r.retryRun.status}\n`);
        if (o.watch) await watchAndReport(c, r.retryRun);
      });
    });
}
