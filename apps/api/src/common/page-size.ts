import { WeftError } from '@weft/engine';

/** Refuses a page size `first` outside 1…`max` (BAD_USER_INPUT naming `first`); null or undefined pass. */
export function checkFirst(first: number | null | undefined, max: number): void {
  if (first != null && (!Number.isInteger(first) || first < 1 || first > max)) {
    throw new WeftError('BAD_USER_INPUT', `first must be between 1 and ${max}`, [{ path: 'first', message: `must be between 1 and ${max}` }]);
  }
}
