import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig, logDatabase, prepareServer, runMain, startOpsListener } from '@weft/platform';
import { ApiAppModule, apiAnnouncement, listenApi } from './index.js';

runMain('weft-api', async () => {
  const config = loadConfig();
  const logger = await prepareServer(config);
  // abortOnError off: a provider failing at boot rejects here (one line, exit 1) instead of process.abort().
  const app = await NestFactory.create(ApiAppModule.forRoot(config), { logger, abortOnError: false });
  app.enableShutdownHooks();
  const url = await listenApi(app, config.port).catch(async (err: { code?: string }) => {
    await app.close();
    throw err.code === 'EADDRINUSE' ? new Error(`port ${config.port} is already in use: set PORT (0 picks a free port)`) : err;
  });
  // /metrics and /readyz are never on the API's port: with WEFT_METRICS_PORT, a listener of their own.
  await startOpsListener(app, config).catch(async (err: unknown) => {
    await app.close();
    throw err;
  });
  new Logger('weft').log(apiAnnouncement(url));
  logDatabase(config);
});
