export { startPlatform, type Roles, type RunningPlatform } from './platform.js';
export { serverCommands } from './server-commands.js';
export { clientCommands } from './client-commands.js';
export { buildProgram, runCli } from './cli.js';
export { EXIT } from './exit-codes.js';
export { queueCommands } from './queue-commands.js';
