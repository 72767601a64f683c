import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { dataDirIdentity, parseMark, procStartTicks } from '../../src/effects/daemonMarker.js';
import { endLeftovers, removeDeadShellFolders } from '../../src/effects/leftoverProcesses.js';
import { signalIfStarted } from '../../src/effects/nativeFd.js';
import { tempDir } from '../helpers/daemon.js';
import { alive, waitFor } from './support.js';

/*
 * The start-up sweep of behaviour.md §1.1 at the unit level: only processes whose marker names this
 * data directory and a daemon that no longer runs are ended; a pid whose start time differs is
 * never signalled.
 */

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dir(): string {
  const d = tempDir('loom-leftover-');
  dirs.push(d);
  return d;
}

/** A `sleep` carrying marker `mark`. */
function sleeper(mark: string): ChildProcess {
  const c = spawn('sleep', ['1000'], { env: { ...process.env, LOOM_DAEMON: mark }, stdio: 'ignore' });
  children.push(c);
  return c;
}

/** A pid that existed and is gone (a process that ran and was reaped). */
function deadPid(): number {
  return spawnSync('true').pid as number;
}

describe('behaviour.md §1.1 the start-up sweep of what a crashed daemon left', () => {
  it('when a record names a dead daemon, then its marked processes end; a running daemon\'s and another data dir\'s stay; the record goes', async () => {
    const data = dir();
    const other = dir();
    const id = dataDirIdentity(data);
    const dead = { pid: deadPid(), ticks: 12345 };
    mkdirSync(join(data, 'daemons'));
    writeFileSync(join(data, 'daemons', `${dead.pid}.${dead.ticks}`), '');
    const orphan = sleeper(`${id}:${dead.pid}:${dead.ticks}`);
    const ours = sleeper(`${id}:${process.pid}:${procStartTicks(process.pid)}`);
    const elsewhere = sleeper(`${dataDirIdentity(other)}:${dead.pid}:${dead.ticks}`);
    const forged = sleeper(`${id}:${dead.pid}`);
    await waitFor(() => [orphan, ours, elsewhere, forged].every((c) => alive(c.pid as number)), 5000);
    expect(endLeftovers(data, id)).toBe(1);
    await waitFor(() => !alive(orphan.pid as number), 5000);
    expect([ours, elsewhere, forged].map((c) => alive(c.pid as number))).toEqual([true, true, true]);
    expect(readdirSync(join(data, 'daemons'))).toEqual([]);
    // Nothing left recorded: nothing is scanned.
    expect(endLeftovers(data, id)).toBeNull();
  });

  it('when the start time does not match, then the process is not signalled', async () => {
    const c = sleeper('x');
    const pid = c.pid as number;
    await waitFor(() => procStartTicks(pid) !== null, 5000);
    const ticks = procStartTicks(pid) as number;
    expect(signalIfStarted(pid, ticks + 1, constants.signals.SIGKILL)).toBe(false);
    expect(alive(pid)).toBe(true);
    expect(signalIfStarted(pid, ticks, constants.signals.SIGKILL)).toBe(true);
    await waitFor(() => !alive(pid), 5000);
    expect(signalIfStarted(deadPid(), ticks, constants.signals.SIGKILL)).toBe(false);
  });

  it('when shell folders name a dead daemon, then they are removed; a running daemon\'s and unnamed ones stay', () => {
    const base = dir();
    const dead = `loom-shell-${deadPid()}.77-aaaaaa`;
    const live = `loom-shell-${process.pid}.${procStartTicks(process.pid)}-bbbbbb`;
    for (const name of [dead, live, 'loom-shell-cccccc', 'other']) {
      mkdirSync(join(base, name));
      writeFileSync(join(base, name, 'command.sh'), 'echo\n');
    }
    expect(removeDeadShellFolders(base)).toBe(1);
    expect(readdirSync(base).sort()).toEqual([live, 'loom-shell-cccccc', 'other'].sort());
  });

  it('when a marker is malformed, then it is not one', () => {
    expect(parseMark('1:2:3:4')).toEqual({ dataDir: '1:2', pid: 3, startTicks: 4 });
    for (const bad of ['', '1:2:3', '1:2:3:4:5', 'a:2:3:4', '1:2:-3:4', '1:2:3:4\n']) expect(parseMark(bad)).toBeNull();
  });
});
