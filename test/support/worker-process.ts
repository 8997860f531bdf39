import 'reflect-metadata';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig, prepareServer } from '@weft/platform';
// The worker's entry point by its path: ts-loader.mjs maps the libraries' `@weft/*` aliases only.
import { TASK_PROCESSOR_OPTIONS, TaskProcessor, WorkerAppModule, type TaskProcessorOptions } from '@weft/worker';

/**
 * A Weft worker as its own process, straight from the sources (run with
 * `node --import ./test/support/ts-register.mjs test/support/worker-process.ts`): configured by
 * the environment like `weft worker` (DATABASE_URL, REDIS_URL, WEFT_QUEUES, WEFT_JOB_LOCK_MS…),
 * it prints `worker ready` once it consumes, and logs as `weft worker` does (JSON lines at
 * WEFT_LOG_LEVEL). For suites that SIGKILL a worker mid-task or read its log.
 *
 * `WEFT_TEST_CODE_UID_BASE` and `WEFT_TEST_CODE_UID_SLOTS` (tests only) give its CODE executions
 * the uid block a suite claimed for itself, instead of a block the worker claims: a suite that
 * starts a second worker on a dead one's block then knows which block that is, whatever else
 * runs on the machine.
 */
const config = loadConfig();
const logger = await prepareServer(config);
const uidBase = process.env.WEFT_TEST_CODE_UID_BASE;
const options: TaskProcessorOptions | undefined = uidBase
  ? { code: { uidBase: Number(uidBase), uidSlots: Number(process.env.WEFT_TEST_CODE_UID_SLOTS ?? 1) } }
  : undefined;

@Global()
@Module({})
class TestOptionsModule {
  static of(value: TaskProcessorOptions | undefined): DynamicModule {
    const providers = value ? [{ provide: TASK_PROCESSOR_OPTIONS, useValue: value }] : [];
    return { module: TestOptionsModule, providers, exports: providers.map((p) => p.provide) };
  }
}

@Module({})
class WorkerProcessModule {
  static forRoot(): DynamicModule {
    return { module: WorkerProcessModule, imports: [TestOptionsModule.of(options), WorkerAppModule.forRoot(config)] };
  }
}

const app = await NestFactory.createApplicationContext(WorkerProcessModule.forRoot(), { logger });
app.enableShutdownHooks();
await app.get(TaskProcessor).start(config.queues);
process.stdout.write('worker ready\n');
