export { ensureDatabase, ensureRuntimeRole, loadConfig } from '@weft/platform';
export { createDataSource, isUuid, runMigrations, TenantRepository } from '@weft/persistence';
