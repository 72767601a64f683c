#!/usr/bin/env node
import { isExecForm, leading } from './argv.js';
import { guard } from './common.js';
import { execForm } from './exec.js';
import { printVersion } from './version.js';

/**
 * Turn on V8's compile cache before a large bundle loads (compileCache.ts). Imported here, not at
 * the top: node:module, which it needs, loads part of Node's ES module loader on Node 20, which the
 * one-command form never uses.
 */
async function compileCacheOn(): Promise<void> {
  (await import('./compileCache.js')).enableCompileCache();
}

/**
 * The `loom` entry. Agent hosts run `loom <topic> <command…>` once per tool call, so that form (and
 * `--version`) is served from this file's small bundle: options, the client and one HTTP request.
 * `loom daemon` goes straight to the daemon when its options read plainly (daemonArgs.ts).
 * Every other call loads the command tree (full.ts: commander and every command family).
 * The bundle is CommonJS (dist/cli/main.cjs, scripts/bundle.mjs), so no ES module is loaded until
 * one of those two imports runs.
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
      await compileCacheOn();
      const { runDaemon } = await import('./daemonEntry.js');
      return runDaemon(daemon);
    }
  }
  // Before the command tree loads, so that its compiled code can come from the cache (Node >= 22.1).
  await compileCacheOn();
  const { main } = await import('./full.js');
  return main(argv);
}

// A reader that stops early (`loom --help | head`, `loom logs | less` then q) closes the pipe: that is
// the end of the output, not a failure, so the CLI ends quietly instead of dying on an unhandled EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

// No top-level await: the bundle is CommonJS. A rejection ends the process with its stack, as an
// uncaught error would.
void entry(process.argv.slice(2));
