import { VersionLookupRepository, type Transaction } from '@weft/persistence';
import { WeftError } from '../index.js';

/**
 * The version a new run of `workflowId` runs on: `requested`, or else the workflow's default —
 * its pinned `default_version`, or the latest when none is pinned; with the database's clock as
 * it was read (`dbNow`).
 * @throws WeftError NOT_FOUND (unknown workflow, or no such version); BAD_USER_INPUT when that
 * version is deprecated (the message names the workflow and version and what to do instead).
 */
export async function versionToRun(m: Transaction, tenantId: string, workflowId: string, requested?: number): Promise<{ version: number; dbNow: Date }> {
  const row = await new VersionLookupRepository(m).choose(tenantId, workflowId, requested);
  if (!row?.latestVersion) throw new WeftError('NOT_FOUND', `workflow ${workflowId} not found`);
  if (row.version === null) throw new WeftError('NOT_FOUND', `workflow ${workflowId} version ${requested} not found`);
  if (row.deprecated) {
    const which = requested !== undefined ? '' : row.defaultVersion !== null ? ' (its pinned default version)' : ' (its latest version, the default)';
    const instead =
      requested !== undefined
        ? 'start the run on another version, or restore this one with deprecateVersion(deprecated: false)'
        : row.defaultVersion !== null
          ? 'pin another default with setDefaultVersion, pass a version, or restore this one with deprecateVersion(deprecated: false)'
          : 'publish a new version, pin another default with setDefaultVersion, or pass a version';
    const msg = `workflow ${workflowId} version ${row.version}${which} is deprecated: new runs on it are refused; ${instead}`;
    throw new WeftError('BAD_USER_INPUT', msg, [{ path: 'version', message: msg }]);
  }
  return { version: row.version, dbNow: row.dbNow };
}

/** Versions remembered at most; past it the oldest is forgotten. */
const MAX_START_VERSIONS = 10_000;

/**
 * The version the last start of a workflow ran on, by tenant, workflow and the version asked for
 * (none: the default), as this process's locking starts chose it. A hint only: a start made with
 * it checks in its own statement that the version is still the one to run on (see `startWrite`).
 */
export class StartVersions {
  private readonly versions = new Map<string, number>();

  get(tenantId: string, workflowId: string, requested: number | undefined): number | undefined {
    return this.versions.get(key(tenantId, workflowId, requested));
  }

  set(tenantId: string, workflowId: string, requested: number | undefined, version: number): void {
    const k = key(tenantId, workflowId, requested);
    if (!this.versions.has(k) && this.versions.size >= MAX_START_VERSIONS) this.versions.delete(this.versions.keys().next().value!);
    this.versions.set(k, version);
  }
}

function key(tenantId: string, workflowId: string, requested: number | undefined): string {
  return `${tenantId}\u0000${requested ?? ''}\u0000${workflowId}`;
}
