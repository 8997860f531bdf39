import 'reflect-metadata';
import { bootWithoutApi, loadConfig, logDatabase, prepareServer, runMain } from '@weft/platform';
import { Scheduler, SchedulerAppModule } from './index.js';

runMain('weft-scheduler', async () => {
  const config = loadConfig();
  const logger = await prepareServer(config);
  // abortOnError off (in bootWithoutApi): a provider failing at boot rejects here (one line, exit 1).
  // With WEFT_METRICS_PORT, the ops listener: /metrics, /readyz and /healthz.
  const { app } = await bootWithoutApi(SchedulerAppModule.forRoot(config), config, logger);
  app.enableShutdownHooks();
  app.get(Scheduler).start();
  logDatabase(config);
});
