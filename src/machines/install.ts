import { assign, fromCallback, setup } from 'xstate';
import type { InstallOutcome } from '../domain/install.js';
import type { CommandCode } from '../domain/result.js';

/**
 * The Package install table of spec §3, one actor per running install (`install:<install_id>`, a
 * child of its agent):
 *
 * | State   | Trigger                          | Next      | Also                                                      |
 * | staging | all files validated and written  | installed | staging directory renamed into place atomically           |
 * | staging | any failure (bad manifest path, network drop, malformed file) | aborted | staging directory wiped; an existing installed package is untouched |
 *
 * `staging` invokes the provided `stage` actor (src/actors): it validates every path before any
 * fetch or write, writes the files into `~/packages/.staging-<name>-<hex>/`, and as its last step
 * renames that folder into place and records the package under the agent's package lock. Only then
 * does it send `install.written`, so `installed` always means "in place and registered"; a failure of
 * the rename itself rolls back and is `install.failed` like any other. On `aborted` the provided
 * action `wipeStaging` removes the staging folder (after the stage actor has settled, so no write
 * can land after the wipe). `install.cancel` (the topic was closed, the agent is being deleted) is a
 * failure too. Progress (`files_done`, `files_total`, `bytes`) lives in the context for the
 * inspector (behaviour.md §13.2). The machine does no I/O.
 */

/** What the stage actor is given (plain data; the install request is the actors layer's). */
export interface InstallInput {
  installId: string;
  agentId: string;
  /** The source as the user gave it (the inspector shows it until the install names itself). */
  source: string;
  /** The request id of the command that started it, when it had one (progress readers match on it). */
  requestId: string | null;
  /** Opaque to the machine: what the provided stage actor needs. */
  request: unknown;
}

export interface InstallContext {
  installId: string;
  agentId: string;
  source: string;
  requestId: string | null;
  request: unknown;
  name: string | null;
  stagingDir: string | null;
  filesDone: number;
  filesTotal: number;
  bytes: number;
  outcome: InstallOutcome | null;
}

/** Progress the stage actor reports (each field only when it changed). */
export interface ProgressUpdate {
  name?: string;
  source?: string;
  stagingDir?: string;
  filesDone?: number;
  filesTotal?: number;
  bytes?: number;
}

export type InstallEvent =
  | ({ type: 'install.progress' } & ProgressUpdate)
  | { type: 'install.written'; outcome: Extract<InstallOutcome, { ok: true }> }
  | { type: 'install.failed'; code: CommandCode; message: string }
  | { type: 'install.cancel'; code: CommandCode; message: string };

const failed = (code: CommandCode, message: string): InstallOutcome => ({ ok: false, code, message });

export const installMachine = setup({
  types: {
    context: {} as InstallContext,
    events: {} as InstallEvent,
    input: {} as InstallInput,
    output: {} as InstallOutcome,
  },
  actors: {
    /** Validate, write the staging folder, commit (provided by src/actors; this default never reports). */
    stage: fromCallback<InstallEvent, InstallInput>(() => undefined),
  },
  actions: {
    /** Remove the staging folder once the stage actor has settled (provided by src/actors). */
    wipeStaging: (_args, _params: { installId: string; dir: string | null }) => {},
  },
}).createMachine({
  id: 'install',
  context: ({ input }) => ({
    installId: input.installId, agentId: input.agentId, source: input.source, requestId: input.requestId, request: input.request,
    name: null, stagingDir: null, filesDone: 0, filesTotal: 0, bytes: 0, outcome: null,
  }),
  initial: 'staging',
  states: {
    staging: {
      invoke: {
        src: 'stage',
        input: ({ context }) => ({ installId: context.installId, agentId: context.agentId, source: context.source, requestId: context.requestId, request: context.request }),
        // A bug in the stage actor is a failure like any other: nothing is left half-done.
        onError: { target: 'aborted', actions: assign({ outcome: ({ event }) => failed('INTERNAL_ERROR', `Internal error: ${String((event.error as Error)?.message ?? event.error)}`) }) },
      },
      on: {
        'install.progress': {
          actions: assign(({ context, event }) => ({
            name: event.name ?? context.name, source: event.source ?? context.source, stagingDir: event.stagingDir ?? context.stagingDir,
            filesDone: event.filesDone ?? context.filesDone, filesTotal: event.filesTotal ?? context.filesTotal, bytes: event.bytes ?? context.bytes,
          })),
        },
        'install.written': { target: 'installed', actions: assign({ outcome: ({ event }) => event.outcome }) },
        'install.failed': { target: 'aborted', actions: assign({ outcome: ({ event }) => failed(event.code, event.message) }) },
        'install.cancel': { target: 'aborted', actions: assign({ outcome: ({ event }) => failed(event.code, event.message) }) },
      },
    },
    installed: { type: 'final' },
    aborted: {
      type: 'final',
      entry: { type: 'wipeStaging', params: ({ context }) => ({ installId: context.installId, dir: context.stagingDir }) },
    },
  },
  output: ({ context }) => context.outcome ?? failed('INTERNAL_ERROR', 'Internal error: install ended without an outcome'),
});
