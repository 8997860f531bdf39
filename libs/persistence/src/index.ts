/**
 * @weft/persistence — the PostgreSQL side of Weft: entities, migrations, the tenant transaction,
 * driver-error mapping and the repositories. Never imports the engine or an app.
 */
export * from './json.js';
export * from './errors.js';
export * from './sql.js';
export * from './tenant-transaction.js';
export * from './claims.js';
export * from './dispatch.js';
export * from './step-committer.js';
export * from './runtime-role.js';
export * from './operational-stats.js';
export * from './data-source.js';
export * from './entities/index.js';
export * from './repositories/index.js';
export { InitialSchema1764489600000 } from './migrations/1764489600000-initial-schema.js';
export * from './database-admin.js';
