import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { addAgent, mint, send, type Answer } from '../capabilities/helpers.js';

/** fs.max_bytes (behaviour.md §1.8). */
export const MAX = 10485760;
export const ALL = ['PUT', 'GET', 'DELETE', 'STAT'];

/** An in-process daemon with agent `fsa`: docs/a.txt, file.txt, a symlink `out` to an outside folder, docs/alias.txt → docs/a.txt. */
export interface FsWorld {
  app: TestApp;
  clock: SimulatedClock;
  home: string;
  outside: string;
  /** A secret with every verb on the whole workspace. */
  all: string;
  req(method: string, path: string, secret?: string, body?: Buffer | string): Promise<Answer>;
}

export async function fsWorld(): Promise<FsWorld> {
  const clock = new SimulatedClock();
  clock.set(Date.parse('2025-06-01T10:00:00.000Z'));
  const app = await startApp({ clock });
  const home = await addAgent(app.base, 'fsa');
  const outside = tempDir('loom-outside-');
  writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE');
  mkdirSync(join(home, 'docs'));
  writeFileSync(join(home, 'docs', 'a.txt'), 'alpha');
  writeFileSync(join(home, 'file.txt'), 'plain');
  symlinkSync(outside, join(home, 'out'));
  symlinkSync(join(home, 'docs', 'a.txt'), join(home, 'docs', 'alias.txt'));
  const all = (await mint(app.base, { agent_id: 'fsa', verbs: ALL, ttl_ms: 3_600_000 })).secret;
  const req = (method: string, path: string, secret?: string, body?: Buffer | string) =>
    send(app.port, { method, path, headers: secret ? auth(secret) : {}, body });
  return { app, clock, home, outside, all, req };
}

export const auth = (s: string) => ({ Authorization: `Bearer ${s}` });
