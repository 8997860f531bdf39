import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig, prepareServer } from '@weft/platform';
// The worker's entry point by its path: ts-loader.mjs maps the libraries' `@weft/*` aliases only.
import { TaskProcessor, WorkerAppModule } from '@weft/worker';

/**
 * A Weft worker as its own process, straight from the sources (run with
 * `node --import ./test/support/ts-register.mjs test/support/worker-process.ts`): configured by
 * the environment like `weft worker` (DATABASE_URL, REDIS_URL, WEFT_QUEUES, WEFT_JOB_LOCK_MS…),
 * it prints `worker ready` once it consumes, and logs as `weft worker` does (JSON lines at
 * WEFT_LOG_LEVEL). For suites that SIGKILL a worker mid-task or read its log.
 */
const config = loadConfig();
const logger = await prepareServer(config);
const app = await NestFactory.createApplicationContext(WorkerAppModule.forRoot(config), { logger });
app.enableShutdownHooks();
await app.get(TaskProcessor).start(config.queues);
process.stdout.write('worker ready\n');
