import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, freePort, tempDir } from '../helpers/daemon.js';
import { Daemons, exec, json } from './support.js';

/**
 * Start-ups on damaged data. A damaged line of an inbox log is kept in a
 * quarantine file beside the log (and the warning says where), never deleted by the next compaction;
 * a registry holding `null` or a malformed record stops the daemon with one line naming the problem;
 * an inbox log that is a folder is one clear line and exit 1, not a stack trace; temp files of
 * interrupted writes are removed at start-up.
 */

const daemons = new Daemons();
afterAll(() => daemons.killAll());

/** Start the daemon on `dataDir` expecting it to exit by itself. */
function runToExit(dataDir: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return freePort().then((port) => new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, 'daemon'], { env: { ...process.env, SVC_PORT: String(port), SVC_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    const t = setTimeout(() => p.kill('SIGKILL'), 15000);
    p.on('exit', (code) => { clearTimeout(t); resolve({ code, stderr, stdout }); });
  }));
}

const AGENT = (id: string, extra: Record<string, unknown> = {}) => ({ id, home: join(tempDir(), id), allowedPaths: [], createdAt: '2025-06-01T10:00:00.000Z', ...extra });
const registry = (agents: Record<string, unknown>) => JSON.stringify({ version: 1, agents }, null, 2) + '\n';
const event = (id: string, text: string) => JSON.stringify({ op: 'add', event: { id, agentId: 'leo', receivedAt: '2025-06-01T10:00:00.000Z', source: 'local-webhook', text, status: 'pending', ackedAt: null } });

/** A data directory with agent leo registered. */
function dataWithLeo(): { dir: string; state: string } {
  const dir = tempDir();
  writeFileSync(join(dir, 'agents.json'), registry({ leo: AGENT('leo') }));
  const state = join(dir, 'agents', 'leo', 'state');
  mkdirSync(state, { recursive: true });
  return { dir, state };
}

describe('damaged files at start-up', () => {
  it('when a middle line of events.jsonl is damaged, then it is quarantined beside the log, the warning names the file, and it survives later compactions', async () => {
    const { dir, state } = dataWithLeo();
    const log = join(state, 'events.jsonl');
    const damaged = '{"op":"add","event":{"id":"evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B3","text":"half a line';
    writeFileSync(log, [event('evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', 'one'), damaged, event('evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B4', 'two'), ''].join('\n'));
    const d = await daemons.start({ dataDir: dir });
    const quarantine = `${log}.quarantine`;
    expect(d.stderr()).toContain(`event inbox of leo: 1 damaged line moved to ${quarantine}`);
    expect(readFileSync(quarantine, 'utf8')).toBe(`${damaged}\n`);
    expect((await exec(d.base, 'leo', 'event', '/events')).body).toMatch(/two[\s\S]*one/);
    // The log was compacted without the line; a clear and a restart never touch the quarantine.
    expect(readFileSync(log, 'utf8')).not.toContain('half a line');
    await exec(d.base, 'leo', 'event', '/events.clear --all');
    await d.stop();
    const again = await daemons.start({ dataDir: dir });
    expect(again.stderr()).not.toContain('damaged');
    expect(readFileSync(quarantine, 'utf8')).toBe(`${damaged}\n`);
    await again.stop();
  });

  it('when an agent\'s state folder is a file, then the daemon refuses to start with one line naming its inbox log, no stack', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agents.json'), registry({ leo: AGENT('leo') }));
    mkdirSync(join(dir, 'agents', 'leo'), { recursive: true });
    writeFileSync(join(dir, 'agents', 'leo', 'state'), 'not a folder');
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^loom: cannot read ${join(dir, 'agents', 'leo', 'state', 'events.jsonl').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*not a directory.*\n$`));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(join(dir, 'agents', 'leo', 'state'), 'utf8')).toBe('not a folder');
  });

  it.each(['agents.json', 'capabilities.json'])('when %s holds null, then the daemon refuses to start and leaves the file as it was', async (file) => {
    const dir = tempDir();
    writeFileSync(join(dir, file), 'null\n');
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(dir, file)}: the file holds null, not a registry\n`);
    expect(readFileSync(join(dir, file), 'utf8')).toBe('null\n');
  });

  it.each([
    ['home is a number', { leo: AGENT('leo', { home: 42 }) }, 'agent "leo": home must be an absolute path'],
    ['home is relative', { leo: AGENT('leo', { home: 'rel/home' }) }, 'agent "leo": home must be an absolute path'],
    ['allowedPaths is not a list', { leo: AGENT('leo', { allowedPaths: 'x' }) }, 'agent "leo": allowedPaths must be a list of absolute paths'],
    ['the id differs from its key', { leo: AGENT('mia') }, 'agent "leo": id must be "leo"'],
    ['the key is not an agent id', { '../x': AGENT('../x') }, 'agent "../x": not a valid agent id'],
    ['the record is not an object', { leo: 'home' }, 'agent "leo": not an object'],
    ['the webhook token is malformed', { leo: AGENT('leo', { webhookToken: 'wh_short' }) }, 'agent "leo": webhookToken is malformed'],
    ['agents is a list', [], '"agents" must be an object'],
  ])('when a record is malformed (%s), then the daemon refuses to start with a message naming it', async (_why, agents, message) => {
    const dir = tempDir();
    const text = JSON.stringify({ version: 1, agents });
    writeFileSync(join(dir, 'agents.json'), text);
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(dir, 'agents.json')}: ${message}\n`);
    expect(readFileSync(join(dir, 'agents.json'), 'utf8')).toBe(text);
  });

  it('when an agent\'s default home, stored as written, was replaced by a link to the data directory, then the daemon still refuses to start', async () => {
    // The start-up check of a default home skips realpath only while no segment below the data directory is a link.
    const dir = tempDir();
    const home = join(dir, 'agents', 'leo', 'home');
    mkdirSync(join(dir, 'agents', 'leo'), { recursive: true });
    symlinkSync(dir, home);
    writeFileSync(join(dir, 'agents.json'), registry({ leo: AGENT('leo', { home }) }));
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(dir, 'agents.json')}: agent "leo": ${home} is the Loom data directory\n`);
  });

  it('when the agent\'s folder above its default home is a link to the data directory, then the daemon refuses to start', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'agents'), { recursive: true });
    symlinkSync(dir, join(dir, 'agents', 'leo'));
    const home = join(dir, 'agents', 'leo', 'home');
    writeFileSync(join(dir, 'agents.json'), registry({ leo: AGENT('leo', { home }) }));
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(dir, 'agents.json')}: agent "leo": ${home} is inside the Loom data directory ${dir}\n`);
  });

  it('when an agent\'s default home is a file, then the daemon refuses to start and names it', async () => {
    const dir = tempDir();
    const home = join(dir, 'agents', 'leo', 'home');
    mkdirSync(join(dir, 'agents', 'leo'), { recursive: true });
    writeFileSync(home, 'not a folder');
    writeFileSync(join(dir, 'agents.json'), registry({ leo: AGENT('leo', { home }) }));
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(dir, 'agents.json')}: agent "leo": ${home} is not a directory\n`);
  });

  it('when a stored home overlaps the data directory, then the daemon refuses to start (it would expose the tokens)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agents.json'), registry({ leo: AGENT('leo', { home: dir }) }));
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(dir, 'agents.json')}: agent "leo": ${dir} is the Loom data directory\n`);
  });

  it('when events.jsonl is a directory, then one clear line and exit 1 (no stack trace)', async () => {
    const { dir, state } = dataWithLeo();
    mkdirSync(join(state, 'events.jsonl'));
    const r = await runToExit(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(state, 'events.jsonl')}: it is a directory\n`);
  });
});

describe('temp files of interrupted writes', () => {
  it('when .<file>.<hex>.tmp files were left by a crash, then start-up removes them and nothing else', async () => {
    const { dir, state } = dataWithLeo();
    const leftovers = [
      join(dir, '.agents.json.0a1b2c3d.tmp'), join(dir, '.capabilities.json.deadbeef.tmp'), join(dir, '.capabilities.journal.jsonl.12345678.tmp'),
      join(state, '.env.json.89abcdef.tmp'), join(state, '.events.jsonl.00ff00ff.tmp'),
    ];
    for (const f of leftovers) writeFileSync(f, 'x'.repeat(40000));
    const kept = [join(dir, '.keep'), join(dir, 'notes.tmp'), join(state, '.events.jsonl.tmp'), join(dir, '.agents.json.XYZ.tmp')];
    for (const f of kept) writeFileSync(f, 'keep');
    const home = JSON.parse(readFileSync(join(dir, 'agents.json'), 'utf8')).agents.leo.home as string;
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, '.draft.md.0a1b2c3d.tmp'), 'user file');
    const d = await daemons.start({ dataDir: dir });
    for (const f of leftovers) expect(existsSync(f)).toBe(false);
    for (const f of kept) expect(readFileSync(f, 'utf8')).toBe('keep');
    expect(readFileSync(join(home, '.draft.md.0a1b2c3d.tmp'), 'utf8')).toBe('user file');
    expect((await json(d.base, 'GET', '/agents')).body.agents).toHaveLength(1);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp')).sort()).toEqual(['.agents.json.XYZ.tmp', 'notes.tmp']);
    await d.stop();
  });
});
