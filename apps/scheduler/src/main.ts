import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig, logDatabase, prepareServer, runMain } from '@weft/platform';
import { Scheduler, SchedulerAppModule } from './index.js';

runMain('weft-scheduler', async () => {
  const config = loadConfig();
  const logger = await prepareServer(config);
  // abortOnError off: a provider failing at boot rejects here (one line, exit 1) instead of process.abort().
  const app = await NestFactory.createApplicationContext(SchedulerAppModule.forRoot(config), { logger, abortOnError: false });
  app.enableShutdownHooks();
  app.get(Scheduler).start();
  logDatabase(config);
});
