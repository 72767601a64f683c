import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeLeftoverTemps } from '../../src/stores/leftovers.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The start-up scan (docs/decisions/0010): it removes temp files of interrupted
 * writes and tells the start-up readers which agents have a state folder, and which agent folders
 * are real folders (the registry's quick check of default homes relies on it).
 */
describe('removeLeftoverTemps', () => {
  it('when some agents have a state folder, then only those are reported, and their leftovers are removed', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'agents', 'leo', 'state'), { recursive: true });
    mkdirSync(join(dir, 'agents', 'mia', 'home'), { recursive: true });
    writeFileSync(join(dir, 'agents', 'leo', 'state', '.env.json.0a1b2c3d.tmp'), 'x');
    writeFileSync(join(dir, 'agents', 'leo', 'state', 'env.json'), '{}');
    const r = removeLeftoverTemps(dir);
    expect(r.removed).toBe(1);
    expect(existsSync(join(dir, 'agents', 'leo', 'state', 'env.json'))).toBe(true);
    expect([r.stateFolders.has('leo'), r.stateFolders.has('mia'), r.stateFolders.has('nobody')]).toEqual([true, false, false]);
    expect([r.stateFolders.plainAgentFolder('leo'), r.stateFolders.plainAgentFolder('mia')]).toEqual([true, true]);
  });

  it('when an agent folder is a link or a file, then it is not a plain folder, and a state folder that is a file still counts as present (its readers report it)', () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    mkdirSync(join(elsewhere, 'state'), { recursive: true });
    mkdirSync(join(dir, 'agents', 'kai'), { recursive: true });
    writeFileSync(join(dir, 'agents', 'kai', 'state'), 'not a folder');
    symlinkSync(elsewhere, join(dir, 'agents', 'leo'));
    writeFileSync(join(dir, 'agents', 'zoe'), 'a file');
    const r = removeLeftoverTemps(dir);
    expect([r.stateFolders.has('kai'), r.stateFolders.has('leo')]).toEqual([true, true]);
    expect([r.stateFolders.plainAgentFolder('kai'), r.stateFolders.plainAgentFolder('leo'), r.stateFolders.plainAgentFolder('zoe')]).toEqual([true, false, false]);
  });

  it('when <data>/agents itself is a link, then no agent folder counts as plain', () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    mkdirSync(join(elsewhere, 'leo'), { recursive: true });
    symlinkSync(elsewhere, join(dir, 'agents'));
    expect(removeLeftoverTemps(dir).stateFolders.plainAgentFolder('leo')).toBe(false);
  });

  it('when there is no agents folder, then nothing is reported and nothing fails', () => {
    const r = removeLeftoverTemps(tempDir());
    expect([r.removed, r.stateFolders.has('leo'), r.stateFolders.plainAgentFolder('leo')]).toEqual([0, false, false]);
  });
  it('when state folders hold undo copies of an earlier run, then they are removed (sessions end with the run); an undo link loses only itself, a data-folder entry named undo stays', () => {
    const dir = tempDir();
    const outside = tempDir();
    writeFileSync(join(outside, 'keep.txt'), 'kept');
    mkdirSync(join(dir, 'agents', 'leo', 'state', 'undo', '7'), { recursive: true });
    writeFileSync(join(dir, 'agents', 'leo', 'state', 'undo', '7', 'a'.repeat(64) + '.0a1b2c3d'), 'before');
    writeFileSync(join(dir, 'agents', 'leo', 'state', 'env.json'), '{}');
    mkdirSync(join(dir, 'agents', 'mia', 'state'), { recursive: true });
    symlinkSync(outside, join(dir, 'agents', 'mia', 'state', 'undo'));
    mkdirSync(join(dir, 'undo'));
    removeLeftoverTemps(dir);
    expect(existsSync(join(dir, 'agents', 'leo', 'state', 'undo'))).toBe(false);
    expect(existsSync(join(dir, 'agents', 'leo', 'state', 'env.json'))).toBe(true);
    expect(existsSync(join(dir, 'agents', 'mia', 'state', 'undo'))).toBe(false);
    expect(existsSync(join(outside, 'keep.txt'))).toBe(true);
    expect(existsSync(join(dir, 'undo'))).toBe(true);
  });
});
