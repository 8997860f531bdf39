import type { Command } from 'commander';
import { applyCommand } from './client/apply-command.js';
import { batchCommands } from './client/batch-commands.js';
import { contextCommands } from './client/context-commands.js';
import { flowCommands } from './client/flow-commands.js';
import { keyCommands } from './client/key-commands.js';
import { logsCommand } from './client/logs-command.js';
import { runControlCommands } from './client/run-control-commands.js';
import { runReadCommands } from './client/run-read-commands.js';
import { scheduleCommands } from './client/schedule-commands.js';
import { settingsCommands } from './client/settings-commands.js';
import { validateCommand } from './client/validate-command.js';
import { webhookCommands } from './client/webhook-commands.js';
import { workflowCommands } from './client/workflow-commands.js';

/**
 * Registers the client-side commands. Those that talk to the API take `--url` and `--api-key`
 * (else `WEFT_URL` / `WEFT_API_KEY`, else the current context, else the local default); every
 * command that prints a result takes `-o table|json|yaml` (`table`: text for people). `validate` and `context` need no server.
 */
export function clientCommands(program: Command): void {
  program.commandsGroup('Workflows:');
  applyCommand(program);
  workflowCommands(program);
  validateCommand(program);
  program.commandsGroup('Runs:');
  runControlCommands(program);
  runReadCommands(program);
  logsCommand(program);
  flowCommands(program);
  batchCommands(program);
  program.commandsGroup('Schedules:');
  scheduleCommands(program);
  program.commandsGroup('Keys, settings, webhooks and contexts:');
  keyCommands(program);
  settingsCommands(program);
  webhookCommands(program);
  contextCommands(program);
}
