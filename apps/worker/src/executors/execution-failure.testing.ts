import { expect } from '@jest/globals';
import { ExecutionError } from './executor.js';

/** The ExecutionError `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function failure(promise: Promise<unknown>): Promise<ExecutionError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ExecutionError);
    return err as ExecutionError;
  }
  throw new Error('expected the execution to fail');
}
