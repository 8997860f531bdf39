import 'reflect-metadata';
import { bootWithoutApi, loadConfig, prepareServer } from '@weft/platform';
// The scheduler's entry point by its path: ts-loader.mjs maps the libraries' `@weft/*` aliases only.
import { Scheduler, SchedulerAppModule } from '@weft/scheduler';

/**
 * A Weft scheduler as its own process, straight from the sources (run with
 * `node --import ./test/support/ts-register.mjs test/support/scheduler-process.ts`): booted as
 * apps/scheduler/src/main.ts boots `weft scheduler`, configured by the environment (DATABASE_URL,
 * REDIS_URL, WEFT_SCHEDULER_INTERVAL_MS…), it prints `scheduler ready` once its pollers started,
 * and on SIGTERM stops them (the poll in flight finishes) and exits. For suites that run several
 * scheduler processes at once.
 */
const config = loadConfig();
const logger = await prepareServer(config);
const { app } = await bootWithoutApi(SchedulerAppModule.forRoot(config), config, logger);
app.enableShutdownHooks();
app.get(Scheduler).start();
process.stdout.write('scheduler ready\n');
