// A jest reporter that prints every skipped test with its title, which holds the reason
// (docs/testing.md "Skips say why"): the default reporter only counts them, so a part missing on
// this machine would otherwise pass unnoticed. One line per skipped test, after the run.
import { relative } from 'node:path';

export default class SkipReporter {
  constructor(globalConfig) {
    this.root = globalConfig.rootDir;
    this.lines = [];
  }

  onTestResult(test, result) {
    for (const t of result.testResults) {
      if (t.status === 'pending' || t.status === 'skipped' || t.status === 'todo') {
        this.lines.push(`skipped: ${relative(this.root, result.testFilePath)}: ${t.fullName}`);
      }
    }
  }

  onRunComplete() {
    if (this.lines.length > 0) process.stderr.write(`\n${this.lines.join('\n')}\n`);
  }
}
