import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PtyProcess as IPty } from '../../src/adapters/ptyTypes.js';
import { LoomClient } from '../../src/client/index.js';
import { CLI, freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { itUnless, ptySkip, requirePty } from '../helpers/nativeParts.js';

let d: RunningDaemon;
let pty: IPty | undefined;
let ptyExit: Promise<number> | undefined;
const pending: Array<Promise<unknown>> = [];
beforeAll(async () => {
  d = await startDaemon();
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo' }) });
});
afterAll(async () => {
  if (pty && ptyExit) {
    pty.kill();
    await ptyExit;
  }
  await d?.stop();
  await Promise.allSettled(pending);
});

const env = () => ({ SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir });

/** Exit 0 and stdout one JSON document: the GET /inspect/state snapshot of this daemon. */
function expectSnapshot(r: { code: number | null; stdout: string }): void {
  expect(r.code).toBe(0);
  const s = JSON.parse(r.stdout);
  expect(Object.keys(s)).toEqual(['at', 'version', 'uptime_ms', 'agents']);
  expect(s.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(['leo']);
}

describe('loom inspect (behaviour.md §13.6)', () => {
  it('prints the page URL of the daemon', async () => {
    const r = await runCli(['inspect'], env());
    expect(r).toMatchObject({ code: 0, stdout: `http://127.0.0.1:${d.port}/inspect\n`, stderr: '' });
  });

  it('--json prints the snapshot of GET /inspect/state', async () => {
    const r = await runCli(['inspect', '--json'], env());
    expectSnapshot(r);
  });

  it('when no daemon answers, then exit 3 with the way out', async () => {
    const r = await runCli(['inspect'], { SVC_PORT: String(await freePort()), SVC_DATA_DIR: tempDir() });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^loom: daemon not reachable .*start it with: loom start\n$/);
  });
});

describe('loom top without a terminal', () => {
  it('prints one frame as plain text (no escape codes) and exits 0, for scripts and logs', async () => {
    const r = await runCli(['top'], env());
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stdout).toMatch(new RegExp(`^loom \\S+ · up \\S+ · 1 agent\\(s\\) · http://127\\.0\\.0\\.1:${d.port}/inspect`));
    expect(r.stdout).toContain('\nagent leo');
  });

  it('with --json, prints exactly one JSON document: the snapshot top would draw', async () => {
    const r = await runCli(['--json', 'top'], env());
    expectSnapshot(r);
  });
});

describe('loom top under a pseudo-terminal (behaviour.md §13.6)', () => {
  itUnless(ptySkip)('draws the topic with its running command and waiting count, and quits on q', async () => {
    const c = new LoomClient(d.base, 'leo');
    // Handled at once: a set-up that fails must not leave a rejection for a later test to trip on.
    // One after another, each once it runs or waits: their order in the queue is what the screen shows.
    const ids = ['r-run', 'r-wait-1', 'r-wait-2'];
    for (const [i, cmd] of ['/exec sleep 20', '/exec sleep 1', '/info'].entries()) {
      pending.push(c.exec('slow', cmd, ids[i]).catch(() => undefined));
      for (let k = 0; k < 200; k++) {
        const topic = (await c.inspectState()).body.agents.find((a) => a.agent_id === 'leo')?.topics.find((t) => t.topic === 'slow');
        if (topic && (topic.running ? 1 : 0) + topic.waiting.length === i + 1) break;
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    let screen = '';
    pty = requirePty().spawn(process.execPath, [CLI, 'top'], { name: 'xterm-256color', cols: 120, rows: 40, cwd: process.cwd(), env: { ...process.env, ...env() } });
    ptyExit = new Promise((resolve) => pty?.onExit(({ exitCode }) => resolve(exitCode)));
    pty.onData((data) => { screen += data; });
    // Escape sequences removed: what a person reads on the terminal.
    const plain = () => screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    for (let i = 0; i < 300 && !/slow tab {2}executing {2}waiting 2\/5/.test(plain()); i++) await new Promise((r) => setTimeout(r, 50));
    const text = plain();
    // The limits, each waiting command's place, via and request id (behaviour.md §13.7).
    expect(text).toMatch(/slow tab {2}executing {2}waiting 2\/5/);
    expect(text).toMatch(/running \/exec sleep 20 {2}[\d.]+m?s exec request r-run/);
    expect(text).toMatch(/#1 waiting \/exec sleep 1 {2}[\d.]+m?s \([\dm.]+s left of 2m00s\) exec request r-wait-1/);
    expect(text).toMatch(/#2 waiting \/info {2}[\d.]+m?s \([\dm.]+s left of 2m00s\) exec request r-wait-2/);
    expect(text).toContain('agent leo');
    expect(screen).toContain('\x1b[?1049h');
    pty.write('q');
    expect(await ptyExit).toBe(0);
    // The terminal is given back: alternate screen left, cursor shown.
    expect(screen.endsWith('\x1b[?25h\x1b[?1049l')).toBe(true);
    pty = undefined;
    await fetch(`${d.base}/sessions/leo/slow`, { method: 'DELETE' });
    await Promise.all(pending);
  });
});
