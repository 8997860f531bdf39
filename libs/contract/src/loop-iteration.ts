/**
 * A DO_WHILE loop's iteration as people read it, the same in the run picture, `weft run-status`
 * and the console. The API counts iterations from 0 (`Task.loopIteration`, `tasks.<loop>.iteration`
 * in templates); people count them from 1, as attempts are.
 */

/** `iteration 3` for the 0-based iteration 2. */
export function loopIterationText(iteration: number): string {
  return `iteration ${iteration + 1}`;
}

/** `iteration 3 of 5` for the 0-based iteration 2 of a loop bounded at 5 (`max_iterations`); `iteration 3` without a bound. */
export function loopProgress(iteration: number, maxIterations: number | null | undefined): string {
  const text = loopIterationText(iteration);
  return maxIterations == null ? text : `${text} of ${maxIterations}`;
}
