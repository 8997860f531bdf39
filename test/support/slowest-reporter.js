/**
 * Prints the ten slowest test files of the run, with their durations in seconds, after Jest's own
 * summary: where a run's time goes, for whoever wants it shorter.
 */
export default class SlowestReporter {
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.count = options.count ?? 10;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .map((r) => ({ path: r.testFilePath, seconds: (r.perfStats.end - r.perfStats.start) / 1000, failed: r.numFailingTests > 0 || Boolean(r.testExecError) }))
      .filter((f) => Number.isFinite(f.seconds) && f.seconds > 0)
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, this.count);
    if (files.length === 0) return;
    const width = Math.max(...files.map((f) => f.seconds.toFixed(1).length));
    const relative = (p) => (p.startsWith(`${this.rootDir}/`) ? p.slice(this.rootDir.length + 1) : p);
    const lines = [
      `slowest ${files.length} test files:`,
      ...files.map((f) => `  ${f.seconds.toFixed(1).padStart(width)} s  ${relative(f.path)}${f.failed ? '  (failed)' : ''}`),
    ];
    // Printed as the process exits, like the summary reporter's line: after Jest's own summary.
    process.once('exit', () => process.stdout.write(`\n${lines.join('\n')}\n`));
  }
}
