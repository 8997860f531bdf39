import { describe, expect, it } from '@jest/globals';
import { isStalePreparedStatement, mapDriverError, TransientDbError } from './errors.js';

/** What pg throws when a prepared statement's result columns changed type under it. */
function staleStatement(): Error {
  return Object.assign(new Error('cached plan must not change result type'), { code: '0A000' });
}

describe('a stale prepared statement', () => {
  it('is transient, and recognised both raw and once mapped, so its connection is discarded either way', () => {
    const raw = staleStatement();
    const mapped = mapDriverError(raw);
    expect(mapped).toBeInstanceOf(TransientDbError);
    expect(isStalePreparedStatement(raw)).toBe(true);
    expect(isStalePreparedStatement(mapped)).toBe(true);
    expect(isStalePreparedStatement(mapDriverError(mapped))).toBe(true);
  });

  it('is not any other transient failure', () => {
    const deadlock = mapDriverError(Object.assign(new Error('deadlock detected'), { code: '40P01' }));
    expect(deadlock).toBeInstanceOf(TransientDbError);
    expect(isStalePreparedStatement(deadlock)).toBe(false);
    expect(isStalePreparedStatement(Object.assign(new Error('feature not supported'), { code: '0A000' }))).toBe(false);
  });
});
