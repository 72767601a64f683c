import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { describeUnless, ptySkip } from '../helpers/nativeParts.js';

/*
 * docs/packaging.md "What `"pty": true` means" says, descriptor by descriptor, what a command in a
 * `bash:` topic has. Each row is checked in a live topic of a daemon whose /describe says pty true.
 */
const page = readFileSync(join(process.cwd(), 'docs', 'packaging.md'), 'utf8');
const section = page.slice(page.indexOf('### What `"pty": true` means'));
const rows = [...section.matchAll(/^\| (\d) \((stdin|stdout|stderr)\) \| (.+?) \|$/gm)].map((m) => ({ fd: Number(m[1]), name: m[2], is: m[3] }));

let d: RunningDaemon | undefined;
beforeAll(async () => {
  if (ptySkip) return;
  d = await startDaemon();
});
afterAll(async () => {
  await d?.stop();
});

describeUnless(ptySkip)('what /describe\'s "pty": true means (docs/packaging.md)', () => {
  it('when each documented descriptor is tested in a bash topic, then it is a terminal exactly where the page says so', async () => {
    expect(rows.map((r) => r.fd)).toEqual([0, 1, 2]);
    const daemon = d as RunningDaemon;
    const env = { SVC_PORT: String(daemon.port), SVC_DATA_DIR: daemon.dataDir, LOOM_AGENT_ID: 'leo' };
    expect((await runCli(['agent', 'add', 'leo'], env)).code).toBe(0);
    const describe = await (await fetch(`${daemon.base}/describe`)).json() as { capabilities: { bash: { pty: boolean } } };
    expect(describe.capabilities.bash.pty).toBe(true);
    const probe = rows.map((r) => `if [ -t ${r.fd} ]; then echo "${r.fd}:terminal"; else echo "${r.fd}:$(readlink /proc/self/fd/${r.fd})"; fi`).join('; ');
    const r = await runCli(['bash:p', '/exec', probe], env);
    expect(r.code).toBe(0);
    const seen = r.stdout.split('\n').filter((l) => /^\d:/.test(l));
    expect(seen).toEqual(rows.map((row) => `${row.fd}:${row.is === 'the terminal' ? 'terminal' : row.is.replace(/`/g, '')}`));
    // `tty` reports on stdin, so it says so (and exits 1: the CLI prints a failed command on stderr).
    expect((await runCli(['bash:p', '/exec', 'tty'], env)).stderr).toContain('\nnot a tty\n');
  });
});
