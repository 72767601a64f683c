import type { Adapter, SyncAdapter } from 'lowdb';
import { readFileIfExists, writeFileAtomic } from '../effects/atomicFile.js';

/** Raised when a registry file exists but cannot be parsed (behaviour.md §1.1: never reset silently). */
export class RegistryReadError extends Error {
  constructor(readonly file: string, reason: string) {
    super(`cannot read ${file}: ${reason}`);
  }
}

/**
 * A lowdb adapter with Loom's write rules: atomic (temp, fsync, rename) and mode 0600.
 * lowdb's own JSONFile renames without fsync and gives no control of the mode, hence this adapter.
 */
export class AtomicJsonFile<T> implements Adapter<T> {
  constructor(private readonly path: string) {}

  async read(): Promise<T | null> {
    const text = readFileIfExists(this.path);
    if (text === undefined) return null;
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new RegistryReadError(this.path, (err as Error).message);
    }
  }

  async write(data: T): Promise<void> {
    writeFileAtomic(this.path, JSON.stringify(data, null, 2) + '\n');
  }
}

/**
 * The synchronous twin of AtomicJsonFile for lowdb's LowSync: registries read on first use from a
 * command (the package registry of an agent) cannot wait for a promise.
 */
export class AtomicJsonFileSync<T> implements SyncAdapter<T> {
  constructor(private readonly path: string) {}

  read(): T | null {
    const text = readFileIfExists(this.path);
    if (text === undefined) return null;
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new RegistryReadError(this.path, (err as Error).message);
    }
  }

  write(data: T): void {
    writeFileAtomic(this.path, JSON.stringify(data, null, 2) + '\n');
  }
}
