/**
 * The pause reason of a run whose node ran out of attempts with `on_exhausted: pause`: `node N
 * exhausted its K attempts: <error>` (`made` attempts so far).
 */
export function exhaustedReason(nodeId: string, made: number, error: string): string {
  return `node ${nodeId} exhausted its ${made} attempt${made === 1 ? '' : 's'}: ${error}`;
}
