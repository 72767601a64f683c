import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { progressBar, progressWords, sizeText } from '../../src/cli/install.js';
import { CLI, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { manifest, send, startFileServer, writeTree, type FileServer } from '../install/support.js';
import { loom } from './support.js';
import { itUnless, ptySkip, requirePty } from '../helpers/nativeParts.js';

/**
 * The install CLI: `loom install <source> [flags]` (progress from the install actor through GET
 * /installs: a bar on a terminal, plain lines otherwise, none with --json; exit 1 on
 * INSTALL_FAILED), `loom packages`, `loom uninstall <name>`, against the built daemon.
 */

let d: RunningDaemon;
let srv: FileServer;
let home: string;
const leo = { LOOM_AGENT_ID: 'leo' };
const SLOW_FILES = 12;

beforeAll(async () => {
  d = await startDaemon();
  home = String((await new LoomClient(d.base).registerAgent({ agent_id: 'leo' })).body.home);
  srv = await startFileServer();
  // A manifest of 12 files, each answered after 400 ms: the install runs long enough to be watched (> 1 s).
  const entries = Array.from({ length: SLOW_FILES }, (_, i) => ({ path: i === 0 ? 'string.md' : `p${i}.md`, url: srv.url(`/slow/${i}.md`) }));
  srv.routes.set('/slow.json', send(manifest(entries)));
  for (let i = 0; i < SLOW_FILES; i++) {
    const body = send(`# Page ${i}\n\n${'text '.repeat(400)}\n`);
    srv.routes.set(`/slow/${i}.md`, (req, res) => { setTimeout(() => body(req, res), 400); });
  }
  writeTree(join(home, 'apps/notes'), { 'string.md': '---\nname: notes\n---\n# Notes\n', 'more.md': '# More\n' });
});
afterAll(async () => {
  await d?.kill();
  await srv?.close();
});

describe('progress text', () => {
  it('shows files and bytes, and the bar fills with the files done', () => {
    const p = { name: 'weather', source: 'gh:o/r', files_done: 6, files_total: 12, bytes: 3 * 1048576 + 524288 };
    expect(progressWords(p)).toBe('weather  6/12 files · 3.5 MiB');
    expect(progressBar(p, 10)).toBe('[#####-----] weather  6/12 files · 3.5 MiB');
    expect(progressBar({ ...p, name: null, files_total: 0, files_done: 0, bytes: 0 }, 4)).toBe('[----] gh:o/r  reading the source · 0 B');
    expect(sizeText(2048)).toBe('2 KiB');
  });
});

describe('loom install', () => {
  it('when a folder is installed by an absolute path (the form an unquoted ~ takes), then it is installed, not taken for a topic', async () => {
    const r = await loom(d, ['install', join(home, 'apps/notes')], leo);
    expect(r.code).toBe(0);
    // Progress lines start after a second, so a quick install has none; a slow machine may show some.
    expect(r.stderr).toMatch(/^(installing \S+ {2}(\d\/2 files|reading the source) · \d+ (B|KiB)\n)*$/);
    expect(r.stdout).toBe('Installed app:notes (local, 2 files) from ~/apps/notes\nnext: /open app:notes\n');
    expect(existsSync(join(home, 'packages/notes/more.md'))).toBe(true);
  });

  it('when flags stand before and after the source, then they all apply', async () => {
    const r = await loom(d, ['install', '--tool', '~/apps/notes', '--as', 'notes-tool'], leo);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Installed app:notes-tool (local, 2 files) from ~/apps/notes\nnext: /open app:notes-tool · /open tool\n');
  });

  it('when stderr is not a terminal, then progress comes as plain lines and the answer on stdout', async () => {
    const r = await loom(d, ['install', srv.url('/slow.json'), '--as', 'slow'], leo);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Installed app:slow (local, ${SLOW_FILES} files) from ${srv.url('/slow.json')}\nnext: /open app:slow\n`);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatch(new RegExp(`^installing (slow|${srv.url('/slow.json').replace(/[.?]/g, '\\$&')})  (\\d+/${SLOW_FILES} files|reading the source) · \\d+(\\.\\d)? (B|KiB|MiB)$`));
    expect(r.stderr).not.toContain('\r');
  });

  itUnless(ptySkip)('when stderr is a terminal, then one bar line is redrawn in place and cleared before the answer', async () => {
    const pty = requirePty().spawn(process.execPath, [CLI, 'install', srv.url('/slow.json'), '--as', 'slowtty'], {
      cols: 120, rows: 20, env: { ...(process.env as Record<string, string>), SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: 'leo' },
    });
    let out = '';
    pty.onData((c) => { out += c; });
    const code = await new Promise<number>((resolve) => pty.onExit((e) => resolve(e.exitCode)));
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`\\r\\x1b\\[2K\\[[#-]{24}\\] slowtty  \\d+/${SLOW_FILES} files · `));
    expect(out).toContain(`\r\x1b[2KInstalled app:slowtty (local, ${SLOW_FILES} files) from ${srv.url('/slow.json')}`);
  });

  it('when --json is given, then there is no progress and stdout is the parsed answer', async () => {
    const r = await loom(d, ['--json', 'install', srv.url('/slow.json'), '--as', 'slowjson'], leo);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { head: { ok: boolean; topic: string; cmd: string }; done: boolean };
    expect(out.head).toMatchObject({ ok: true, topic: 'app', cmd: `/install ${srv.url('/slow.json')} --as slowjson` });
    expect(out.done).toBe(true);
  });

  it('when the install fails, then the ERROR(INSTALL_FAILED) text is on stderr and the exit code is 1', async () => {
    const r = await loom(d, ['install', 'http://192.0.2.1/app.json'], leo);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('ERROR(INSTALL_FAILED): Refusing plain http:// URL http://192.0.2.1/app.json; use https:// (http:// is allowed only for 127.0.0.1, localhost and [::1])\n');
    const j = await loom(d, ['--json', 'install', 'http://192.0.2.1/app.json'], leo);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stderr)).toMatchObject({ code: 'INSTALL_FAILED', error: expect.stringMatching(/^Refusing plain http:\/\/ URL/) });
  });

  it('when a file of the manifest is missing, then nothing is installed and the exit code is 1', async () => {
    srv.routes.set('/broken.json', send(manifest([{ path: 'string.md', content: '# B\n' }, { path: 'gone.md', url: srv.url('/gone.md') }])));
    const r = await loom(d, ['install', srv.url('/broken.json'), '--as', 'broken'], leo);
    expect(r.code).toBe(1);
    // Progress lines (if the machine is slow) come first; the failure body ends stderr.
    expect(r.stderr.split('\n').filter((l) => !l.startsWith('installing ')).join('\n')).toBe(`ERROR(INSTALL_FAILED): Cannot fetch ${srv.url('/gone.md')}: HTTP 404\n`);
    expect(existsSync(join(home, 'packages/broken'))).toBe(false);
  });

  it('when the source is missing or the agent unknown, then usage (2) and unknown-agent (1) failures say what to do', async () => {
    const u = await loom(d, ['install'], leo);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain("missing required argument 'source'");
    const g = await loom(d, ['--agent', 'ghost', 'install', '~/x'], leo);
    expect(g.code).toBe(1);
    expect(g.stderr).toBe("loom: unknown agent 'ghost'; create it with: loom agent add ghost\n");
  });
});

describe('loom packages and loom uninstall', () => {
  it('when packages are listed, then the text is /packages and --json gives the registry records', async () => {
    const t = await loom(d, ['packages'], leo);
    expect(t.code).toBe(0);
    expect(t.stdout.split('\n')[0]).toBe('Packages (5)');
    expect(t.stdout).toMatch(/^ {2}notes-tool +tool +local +- +~\/apps\/notes$/m);
    const j = await loom(d, ['--json', 'packages'], leo);
    const body = JSON.parse(j.stdout) as { agent_id: string; packages: Array<Record<string, unknown>> };
    expect(body.agent_id).toBe('leo');
    expect(body.packages.map((p) => p.name)).toEqual(['notes', 'notes-tool', 'slow', 'slowjson', 'slowtty']);
    expect(body.packages[0]).toMatchObject({ name: 'notes', type: 'app', mode: 'local', source: '~/apps/notes', files: 2 });
    expect(body.packages[0]).not.toHaveProperty('installId');
  });

  it('when a package is uninstalled, then its folder goes; a second time it is NOT_FOUND with exit 1', async () => {
    const r = await loom(d, ['uninstall', 'notes'], leo);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Uninstalled app:notes (removed ~/packages/notes)\n');
    expect(existsSync(join(home, 'packages/notes'))).toBe(false);
    const again = await loom(d, ['uninstall', 'notes'], leo);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('ERROR(NOT_FOUND): Package not found: notes\nRecovery: /packages\n');
  });

  it('when an agent has no packages, then the empty list says how to install one', async () => {
    await new LoomClient(d.base).registerAgent({ agent_id: 'mia', home: join(tempDir(), 'mia') });
    const r = await loom(d, ['--agent', 'mia', 'packages']);
    expect(r.stdout).toBe('Packages (0)\n---\n  (none)\nnext: /install <source>\n');
  });
});

describe('GET /packages and GET /installs (beyond spec)', () => {
  it('when X-Agent-Id is missing or unknown, then 400 and 401 with the /exec texts', async () => {
    for (const path of ['/packages', '/installs']) {
      const none = await fetch(`${d.base}${path}`);
      expect(none.status).toBe(400);
      expect(await none.json()).toEqual({ error: 'X-Agent-Id header required' });
      const ghost = await fetch(`${d.base}${path}`, { headers: { 'X-Agent-Id': 'ghost' } });
      expect(ghost.status).toBe(401);
      expect(await ghost.json()).toEqual({ error: 'Unknown agent: ghost' });
    }
  });
});
