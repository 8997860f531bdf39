export { devSummary, ensureDatabase, ensureRuntimeRole, loadConfig, startDevServices } from '@weft/platform';
export { createDataSource, isUuid, runMigrations, TenantRepository } from '@weft/persistence';
export { DEFAULT_QUEUES } from '@weft/platform';
export { allQueueReservations, QueueReservationRepository, WorkerRegistryRepository } from '@weft/persistence';
