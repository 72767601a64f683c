import { VERSION } from '../version.js';
import { client, cliPort, examples, globals, guard, print, type CliParts, type GlobalOpts } from './common.js';

/** What `loom --version` reports: the CLI, and the daemon when one answers on the port. */
export interface VersionInfo {
  cli: string;
  daemon: { version: string; protocol: string; url: string } | null;
}

/** The daemon's /describe version and protocol, or null when nothing answers. */
async function daemonVersion(opts: GlobalOpts): Promise<VersionInfo['daemon']> {
  try {
    const r = await client(opts, false).describe();
    if (r.status !== 200) return null;
    return { version: String(r.body.version), protocol: String(r.body.protocol), url: `http://127.0.0.1:${cliPort(opts)}` };
  } catch {
    // Not running (or not reachable): the CLI version alone is still the answer.
    return null;
  }
}

/**
 * `loom --version`, `loom -V`, `loom version` (behaviour.md §2.13): the CLI version, and the
 * daemon's version and protocol when it runs. Exit 0 either way.
 */
export async function printVersion(opts: GlobalOpts): Promise<number> {
  const port = cliPort(opts);
  const d = await daemonVersion(opts);
  const info: VersionInfo = { cli: VERSION, daemon: d };
  const second = d ? `daemon: loom ${d.version} · protocol ${d.protocol} · ${d.url}` : `daemon: not running on port ${port}`;
  print(opts, info, `loom ${VERSION} (CLI)\n${second}`);
  return 0;
}

/** `loom version`. */
export function versionCli({ program }: CliParts): void {
  examples(program.command('version').description('Print the CLI version, and the daemon\'s version and protocol when it runs'), [
    'loom version', 'loom --version', 'loom version --json   # {"cli", "daemon": {"version", "protocol", "url"} | null}',
  ]).action(() => guard(globals(program), () => printVersion(globals(program))));
}
