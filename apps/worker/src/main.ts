import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig, logDatabase, prepareServer, runMain } from '@weft/platform';
import { TaskProcessor, WorkerAppModule } from './index.js';

runMain('weft-worker', async () => {
  const config = loadConfig();
  const logger = await prepareServer(config);
  // abortOnError off: a provider failing at boot rejects here (one line, exit 1) instead of process.abort().
  const app = await NestFactory.createApplicationContext(WorkerAppModule.forRoot(config), { logger, abortOnError: false });
  app.enableShutdownHooks();
  await app.get(TaskProcessor).start(config.queues);
  logDatabase(config);
});
