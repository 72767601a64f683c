/**
 * Files the daemon opens on an agent's behalf (behaviour.md §16): the outcomes of one bounded read,
 * the limits of the operations that have none elsewhere, and the texts of a refusal.
 */

/** behaviour.md §16: the read limit of the file commands (`/edit`, `/write`, `/append`, `/replace`, `/undo`). */
export const FILE_COMMAND_MAX_BYTES = 10 * 1024 * 1024;

/** Why a read was refused before or while reading. */
export type AgentFileRefusal =
  /** Absent (or a file stands where a parent folder should be). */
  | { refused: 'missing' }
  /** A folder where a file was expected. */
  | { refused: 'directory' }
  /** A FIFO, a device, a socket, or a symlink swapped in after the path was resolved. */
  | { refused: 'not_regular' }
  /** Over the operation's limit when opened or while it was read (`size` is at least limit + 1). */
  | { refused: 'too_large'; size: number };

/** A regular file read whole, at most the limit. */
export interface AgentFileData {
  data: Buffer;
  /** Permission bits at the time of the read. */
  mode: number;
}

/** The outcome of one bounded read. */
export type AgentFileRead = AgentFileData | AgentFileRefusal;

/** True for a refused read. */
export function isFileRefusal(r: AgentFileRead): r is AgentFileRefusal {
  return 'refused' in r;
}

/** behaviour.md §16: the message of a command refusing anything but a regular file. */
export function notRegularText(display: string): string {
  return `not a regular file: ${display}`;
}
