import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CoreModule, ensureRuntimeRole, loadConfig, WeftLogger } from '@weft/platform';
import { WorkerModule } from '../../apps/worker/src/worker.module.js';
import { TaskProcessor } from '../../apps/worker/src/processors/task.processor.js';

/**
 * A Weft worker as its own process, straight from the sources (run with
 * `node --import ./test/support/ts-register.mjs test/support/worker-process.ts`): configured by
 * the environment like `weft worker` (DATABASE_URL, REDIS_URL, WEFT_QUEUES, WEFT_JOB_LOCK_MS…),
 * it prints `worker ready` once it consumes, and logs as `weft worker` does (JSON lines at
 * WEFT_LOG_LEVEL). For suites that SIGKILL a worker mid-task or read its log.
 */
const config = loadConfig();
await ensureRuntimeRole(config.databaseUrl);

@Module({ imports: [CoreModule.forRoot(config), WorkerModule] })
class WorkerProcessModule {}

const app = await NestFactory.createApplicationContext(WorkerProcessModule, { logger: new WeftLogger(config.logLevel) });
app.enableShutdownHooks();
app.get(TaskProcessor).start(config.queues);
process.stdout.write('worker ready\n');
