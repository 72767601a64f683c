#!/usr/bin/env node
import { isExecForm, leading } from './argv.js';
import { guard } from './common.js';
import { enableCompileCache } from './compileCache.js';
import { execForm } from './exec.js';
import { printVersion } from './version.js';

/**
 * The `loom` entry. Agent hosts run `loom <topic> <command…>` once per tool call, so that form (and
 * `--version`) is served from this file's small bundle: options, the client and one HTTP request.
 * `loom daemon` goes straight to the daemon when its options read plainly (daemonArgs.ts).
 * Every other call loads the command tree (full.ts: commander and every command family).
 */
async function entry(argv: string[]): Promise<void> {
  // The completion scripts' helper reads the command tree.
  if (argv[0] !== '__complete') {
    const lead = leading(argv);
    if (lead.version) return guard(lead.opts, () => printVersion(lead.opts));
    if (lead.at < argv.length && !lead.help && isExecForm(argv, lead.at)) {
      return guard(lead.opts, () => execForm(lead.opts, argv[lead.at], argv.slice(lead.at + 1)));
    }
    const daemon = argv[lead.at] === 'daemon' ? (await import('./daemonArgs.js')).daemonForm(argv, lead) : null;
    if (daemon) {
      enableCompileCache();
      const { runDaemon } = await import('./daemonEntry.js');
      return runDaemon(daemon);
    }
  }
  // Before the command tree loads, so that its compiled code can come from the cache (Node >= 22.1).
  enableCompileCache();
  const { main } = await import('./full.js');
  return main(argv);
}

// A reader that stops early (`loom --help | head`, `loom logs | less` then q) closes the pipe: that is
// the end of the output, not a failure, so the CLI ends quietly instead of dying on an unhandled EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

await entry(process.argv.slice(2));
