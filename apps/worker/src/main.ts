import 'reflect-metadata';
import { bootWithoutApi, loadConfig, logDatabase, prepareServer, runMain } from '@weft/platform';
import { TaskProcessor, WorkerAppModule } from './index.js';

runMain('weft-worker', async () => {
  const config = loadConfig();
  const logger = await prepareServer(config);
  // abortOnError off (in bootWithoutApi): a provider failing at boot rejects here (one line, exit 1).
  // With WEFT_METRICS_PORT, the ops listener: /metrics, /readyz and /healthz.
  const { app } = await bootWithoutApi(WorkerAppModule.forRoot(config), config, logger);
  app.enableShutdownHooks();
  await app.get(TaskProcessor).start(config.queues);
  logDatabase(config);
});
