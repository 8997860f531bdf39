/**
 * Prints one closing line, `tests: N passed, N failed[, N skipped]`, after Jest's own summary: the
 * plain form CI reads to count tests.
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`;
    // Printed as the process exits, so it closes the output after Jest's own summary.
    process.once('exit', () => process.stdout.write(`\n${line}\n`));
  }
}
