import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { copyWritable, FIXTURE_APPS } from '../helpers/fixtures.js';
import { PROBE_DOC, run, skipReason } from './support.js';

/*
 * behaviour.md §15: ordinary work still works inside the workspace sandbox, through /exec, a bash
 * shell and a CLI action: git, npm, python3, curl to an allowed loopback server (through the egress proxy), mktemp (TMPDIR is the
 * private temp folder), pipes, and a real corpus app's CLI action.
 */

const reason = skipReason();
if (reason) process.stderr.write(`test/sandbox/ordinary: skipped: ${reason}\n`);
const suite = reason ? describe.skip : describe;

let d: RunningDaemon | undefined;
let c: LoomClient;
let home = '';
let stub: Server | undefined;
let port = 0;

beforeAll(async () => {
  if (reason) return;
  stub = createServer((_req, res) => res.end('pong'));
  await new Promise<void>((r) => stub!.listen(0, '127.0.0.1', r));
  port = (stub.address() as { port: number }).port;
  const pyenv = join(homedir(), '.pyenv');
  d = await startDaemon({ env: existsSync(pyenv) ? { SVC_SANDBOX_READ: pyenv } : {} });
  c = new LoomClient(d.base, 'worker');
  // The agent's own loopback server is reached through the egress proxy by an explicit allow entry (behaviour.md §15.2).
  home = String((await c.registerAgent({ agent_id: 'worker', sandbox: 'workspace', network: { allow: [`127.0.0.1:${port}`] } })).body.home);
  writeFileSync(join(home, 'probe.md'), PROBE_DOC);
  expect((await run(c, 'doc', '/open ~/probe.md')).ok).toBe(true);
  copyWritable(join(FIXTURE_APPS, 'apps', 'apps', 'humanizer'), join(home, 'apps', 'humanizer'));
}, 30000);

afterAll(async () => {
  await d?.stop();
  await new Promise((r) => (stub ? stub.close(r) : r(undefined)));
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

type Channel = 'exec' | 'bash' | 'cli';

/** Run a line through a channel; the body's last lines are the command's output. */
async function work(channel: Channel, line: string): Promise<{ ok: boolean; out: string }> {
  if (channel === 'cli') {
    writeFileSync(join(home, 'probe.sh'), line + '\n');
    const r = await run(c, 'doc', '/act.probe');
    return { ok: r.ok, out: r.body };
  }
  const r = await run(c, channel === 'bash' ? 'bash:w' : 'main', `/exec ${line}`);
  return { ok: r.ok, out: r.body.split('\n---\n').slice(1).join('\n---\n') };
}

const WORK: Array<[string, string, RegExp]> = [
  ['git init and commit in the home', 'rm -rf repo-$$ && mkdir repo-$$ && cd repo-$$ && git init -q && git -c user.email=a@b.c -c user.name=n commit -q --allow-empty -m first && git log --format=%s', /^first$/],
  ['npm --version', 'npm --version', /^\d+\.\d+\.\d+$/],
  ['python3 -c', "python3 -c 'print(6 * 7)'", /^42$/],
  ['curl to a loopback server', '', /^pong$/],
  ['mktemp in the private temp folder', 'f=$(mktemp) && echo hi > "$f" && cat "$f" && case "$f" in "$TMPDIR"/*) echo in-tmpdir;; esac', /^hi\nin-tmpdir$/],
  ['pipes', 'echo abc | tr a-z A-Z | rev', /^CBA$/],
];

suite('behaviour.md §15 ordinary work inside the workspace sandbox', () => {
  for (const channel of ['exec', 'bash', 'cli'] as const) {
    it.each(WORK)(`${channel}: %s works`, async (what, line, expected) => {
      const text = what.startsWith('curl') ? `curl -s http://127.0.0.1:${port}/` : line;
      const r = await work(channel, text);
      expect(r.out.trim()).toMatch(expected);
      expect(r.ok).toBe(true);
    });
  }

  it('when TMPDIR is read, then it is the private temp folder in the agent state directory', async () => {
    expect((await work('exec', 'echo "$TMPDIR"')).out).toBe(join(d!.dataDir, 'agents', 'worker', 'tmp'));
  });

  it("when a corpus app's CLI action runs (humanizer, real python3), then it answers as unconfined", async () => {
    await run(c, 'hz', '/open ~/apps/humanizer/string.md');
    const r = await run(c, 'hz', '/act.check "We delve into a crucial landscape."');
    expect(r.body).toBe('## AI Pattern Check\n\n- **AI word:** `delve`\n- **AI word:** `crucial`\n- **AI word:** `landscape`\n\n**Found 3 pattern(s).**');
  });
});
