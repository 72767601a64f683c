import { describe, expect, it } from '@jest/globals';
import { closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppendLog, LogClosedError } from '../../src/stores/appendLog.js';
import { tempDir } from '../helpers/temp.js';

describe('AppendLog (group commit, rewrite, repair)', () => {
  it('when many appends race, then onDurable runs in append order before each promise resolves', async () => {
    const path = join(tempDir(), 'a', 'b', 'log.jsonl');
    const seen: number[] = [];
    const log = new AppendLog(path, () => seen.map((n) => `${n}\n`).join(''));
    const done: number[] = [];
    await Promise.all(Array.from({ length: 100 }, (_, i) => log.append(`${i}\n`, () => seen.push(i)).then(() => {
      expect(seen).toContain(i);
      done.push(i);
    })));
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(readFileSync(path, 'utf8')).toBe(seen.map((n) => `${n}\n`).join(''));
    await log.close();
  });

  it('when a rewrite is queued between appends, then it sees every earlier append and later appends land in the new file', async () => {
    const path = join(tempDir(), 'log');
    const state: string[] = [];
    const log = new AppendLog(path, () => state.join(''));
    const p1 = log.append('a\n', () => state.push('a\n'));
    const p2 = log.rewrite(() => {
      expect(state).toEqual(['a\n']);
      return { data: 'A\n', onDurable: () => state.splice(0, state.length, 'A\n') };
    });
    const p3 = log.append('b\n', () => state.push('b\n'));
    await Promise.all([p1, p2, p3]);
    expect(readFileSync(path, 'utf8')).toBe('A\nb\n');
    expect(state.join('')).toBe('A\nb\n');
    await log.close();
  });

  it('when a write fails, then that append rejects and the next one repairs the file from the durable state first', async () => {
    const path = join(tempDir(), 'log');
    const state: string[] = [];
    const log = new AppendLog(path, () => state.join(''));
    await log.append('ok\n', () => state.push('ok\n'));
    // Pull the descriptor out from under the log: the next write fails with EBADF.
    closeSync((log as unknown as { fd: number }).fd);
    await expect(log.append('lost\n', () => state.push('lost\n'))).rejects.toThrow();
    await log.append('next\n', () => state.push('next\n'));
    expect(readFileSync(path, 'utf8')).toBe('ok\nnext\n');
    await log.close();
  });

  it('when the log is closed, then queued work finishes and later operations reject', async () => {
    const path = join(tempDir(), 'log');
    const log = new AppendLog(path, () => '');
    const a = log.append('x\n');
    const c = log.close();
    await Promise.all([a, c]);
    expect(readFileSync(path, 'utf8')).toBe('x\n');
    await expect(log.append('y\n')).rejects.toBeInstanceOf(LogClosedError);
  });
});
