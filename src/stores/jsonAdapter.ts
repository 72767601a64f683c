import type { Adapter, SyncAdapter } from 'lowdb';
import { readFileIfExists, writeFileAtomic } from '../effects/atomicFile.js';

/** Raised when a registry file exists but cannot be parsed (behaviour.md §1.1: never reset silently). */
export class RegistryReadError extends Error {
  constructor(readonly file: string, reason: string) {
    super(`cannot read ${file}: ${reason}`);
  }
}

/** The value of one JSON text (a log line), or undefined when it is not JSON (JSON itself never gives undefined). */
export function parseJsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** A file-system error as one short phrase for `loom: cannot read <file>: <phrase>`. */
export function fileErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (err as Error).message;
}

/** A registry file's JSON value, undefined when there is no file; unreadable or not JSON throws RegistryReadError. */
function readRegistry(path: string): unknown {
  let text: string | undefined;
  try {
    text = readFileIfExists(path);
  } catch (err) {
    throw new RegistryReadError(path, fileErrorText(err));
  }
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RegistryReadError(path, (err as Error).message);
  }
}

/**
 * A lowdb adapter with Loom's write rules: atomic (temp, fsync, rename) and mode 0600.
 * lowdb's own JSONFile renames without fsync and gives no control of the mode, hence this adapter.
 */
export class AtomicJsonFile<T> implements Adapter<T> {
  constructor(private readonly path: string) {}

  async read(): Promise<T | null> {
    const value = readRegistry(this.path);
    // lowdb would take null for "no file yet" and start an empty registry, losing every record.
    if (value === null) throw new RegistryReadError(this.path, 'the file holds null, not a registry');
    return value === undefined ? null : (value as T);
  }

  async write(data: T): Promise<void> {
    this.writeSync(data);
  }

  /** The same write, throwing synchronously (a caller that must know it is durable before going on). */
  writeSync(data: T): void {
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
    const value = readRegistry(this.path);
    return value === undefined ? null : (value as T);
  }

  write(data: T): void {
    writeFileAtomic(this.path, JSON.stringify(data, null, 2) + '\n');
  }
}
