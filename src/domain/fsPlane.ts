import type { Readable } from 'node:stream';

/**
 * The file-system plane port (spec §4.1): what the /fs route needs from the resolver in
 * src/effects, injected by the feature that composes it (architecture.md dependency rule).
 */

/** Why the resolver refuses (mapped to 403/409/404 by the route, behaviour.md §9.6 step 6). */
export type FsRefusalKind = 'symlink' | 'not_a_directory' | 'is_a_directory' | 'not_found' | 'not_regular';

/** A refusal of the resolver: an expected outcome, not a bug. */
export class FsRefusal extends Error {
  constructor(readonly kind: FsRefusalKind) {
    super(kind);
  }
}

/** A regular file opened for reading, with its size and mtime at open time. */
export interface OpenFile {
  fd: number;
  size: number;
  mtimeMs: number;
}

/** Where a PUT body goes: the temp file of the upload. */
export interface FileSink {
  /** Append a chunk; `done` runs once it is fully written. */
  write(chunk: Buffer, done: (err: Error | null) => void): void;
}

/** The four operations of spec §4.1 over decoded, validated segments below an agent's home. */
export interface FsOperations {
  /** GET: the opened regular file; the caller sends it with readWhole or stream. */
  openForRead(home: string, segments: readonly string[]): Promise<OpenFile>;
  /** HEAD (STAT): size and mtime of a regular file. */
  statFile(home: string, segments: readonly string[]): Promise<{ size: number; mtimeMs: number }>;
  /** DELETE: true when the file existed. */
  deleteFile(home: string, segments: readonly string[]): Promise<boolean>;
  /** PUT: `pump` writes the body into the sink and returns its size; the file appears whole or not at all. */
  putFile(home: string, segments: readonly string[], pump: (sink: FileSink) => Promise<number>): Promise<{ created: boolean; size: number }>;
  /** Read a small opened file whole (up to its size at open time) and close it. */
  readWhole(f: OpenFile): Buffer;
  /** A stream of an opened file's bytes 0 … size-1 that closes the file when done or destroyed. */
  stream(f: OpenFile): Readable;
  /** Close an opened file that will not be sent. */
  release(fd: number): void;
}
