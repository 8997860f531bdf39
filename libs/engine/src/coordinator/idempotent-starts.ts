import { RunEventRepository, VersionLookupRepository, type IdempotentRun, type Transaction } from '@weft/persistence';
import { WeftError } from '../index.js';
import type { StartRunInput } from './inputs.js';

/**
 * The run `input.idempotencyKey` already names in `m`, compared with the start (its input and
 * config as `jsonb` compares them, `{}` when absent); undefined when the key names none.
 */
export function runOfKey(m: Transaction, tenantId: string, input: StartRunInput): Promise<IdempotentRun | undefined> {
  return new RunEventRepository(m).runByIdempotencyKey(tenantId, input.idempotencyKey!, input.input ?? {}, input.config ?? {});
}

/**
 * Refuses a start whose idempotency key names run `existing` when the start asks for something
 * else: another workflow, another version (the one `resolved`, else `input.version`, else the one
 * the workflow's default resolves to now, deprecated or not), another input or another config.
 * The same key with the same workflow, version, input and config is the same start: its caller
 * returns `existing`.
 * @throws WeftError CONFLICT naming the run and what differs: `idempotency key "k" was used by run
 * R with a different input` (path `idempotencyKey`).
 */
export async function refuseDifferentStart(m: Transaction, tenantId: string, input: StartRunInput, existing: IdempotentRun, resolved?: number): Promise<void> {
  const differs: string[] = [];
  if (existing.workflowId !== input.workflowId) {
    differs.push(`workflow (it ran ${existing.workflowId}, this start ${input.workflowId})`);
  } else {
    const version =
      resolved ?? input.version ?? (await new VersionLookupRepository(m).choose(tenantId, input.workflowId, undefined))?.version ?? existing.version;
    if (version !== existing.version) differs.push(`version (it ran ${existing.version}, this start ${version})`);
  }
  if (!existing.sameInput) differs.push('input');
  if (!existing.sameConfig) differs.push('config');
  if (differs.length === 0) return;
  const what = differs.length === 1 ? differs[0] : `${differs.slice(0, -1).join(', ')} and ${differs[differs.length - 1]}`;
  const message = `idempotency key ${JSON.stringify(input.idempotencyKey)} was used by run ${existing.id} with a different ${what}`;
  throw new WeftError('CONFLICT', message, [{ path: 'idempotencyKey', message }]);
}
