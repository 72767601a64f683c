import { assign, fromCallback, sendTo, setup, type CallbackActorLogic } from 'xstate';
import type { InstallOutcome, InstallProgress } from '../domain/install.js';
import type { CommandCode } from '../domain/result.js';

/**
 * The Package install table of spec §3, one actor per running install (`install:<install_id>`, a
 * child of its agent):
 *
 * | State   | Trigger                          | Next      | Also                                                      |
 * | staging | all files validated and written  | installed | staging directory renamed into place atomically           |
 * | staging | any failure (bad manifest path, network drop, malformed file) | aborted | staging directory wiped; an existing installed package is untouched |
 *
 * `staging` invokes the `stage` actor (provided by the install feature): it validates every path
 * before any fetch or write, writes the files into `~/packages/.staging-<name>-<hex>/`, and as its
 * last step renames that folder into place and records the package under the agent's package lock.
 * Only then does it send `install.written`, so `installed` always means "in place and registered".
 * The staging folder is the stage actor's own: on any failure it wipes the folder before it sends
 * `install.failed`, so `aborted` means "nothing left behind", and the actor's end is the moment the
 * caller may answer. `install.cancel` (the topic was closed, the agent is being deleted) tells the
 * stage actor to stop (`install.abort`) and waits for its failure, which ends the install with the
 * cancel's reason. Progress (`files_done`, `files_total`, `bytes`) lives in the context for the
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
  filesDone: number;
  filesTotal: number;
  bytes: number;
  /** Why the install was cancelled, once it was (the stage actor's own failure is not the answer then). */
  cancelled: InstallOutcome | null;
  outcome: InstallOutcome | null;
}

/** Progress the stage actor reports (each field only when it changed). */
export interface ProgressUpdate {
  name?: string;
  source?: string;
  filesDone?: number;
  filesTotal?: number;
  bytes?: number;
}

/** What the stage actor reports back to its install. */
export type StageReport =
  | ({ type: 'install.progress' } & ProgressUpdate)
  | { type: 'install.written'; outcome: Extract<InstallOutcome, { ok: true }> }
  | { type: 'install.failed'; code: CommandCode; message: string };

export type InstallEvent = StageReport | { type: 'install.cancel'; code: CommandCode; message: string };

/** What the install tells its stage actor: stop, clean up, and report the failure. */
export type StageCommand = { type: 'install.abort' };

/** The logic of the `stage` actor (a callback actor: it reports, and takes `install.abort`). */
export type InstallStageLogic = CallbackActorLogic<StageCommand, InstallInput, StageReport>;

/** An install's public progress (behaviour.md §13.2 `installs` entry) and the request id readers match on. */
export function installProgressOf(snap: { value: unknown; context: InstallContext }): InstallProgress & { request_id: string | null } {
  const c = snap.context;
  return {
    install_id: c.installId, name: c.name, source: c.source, state: snap.value as InstallProgress['state'],
    files_done: c.filesDone, files_total: c.filesTotal, bytes: c.bytes, request_id: c.requestId,
  };
}

const failed = (code: CommandCode, message: string): InstallOutcome => ({ ok: false, code, message });

export const installMachine = setup({
  types: {
    context: {} as InstallContext,
    events: {} as InstallEvent,
    input: {} as InstallInput,
    output: {} as InstallOutcome,
  },
  actors: {
    /** Validate, write the staging folder, commit (provided by the install feature; this default never reports). */
    stage: fromCallback<StageCommand, InstallInput, StageReport>(() => undefined),
  },
}).createMachine({
  id: 'install',
  context: ({ input }) => ({
    installId: input.installId, agentId: input.agentId, source: input.source, requestId: input.requestId, request: input.request,
    name: null, filesDone: 0, filesTotal: 0, bytes: 0, cancelled: null, outcome: null,
  }),
  initial: 'staging',
  states: {
    staging: {
      invoke: {
        id: 'stage',
        src: 'stage',
        input: ({ context }) => ({ installId: context.installId, agentId: context.agentId, source: context.source, requestId: context.requestId, request: context.request }),
        // A bug in the stage actor is a failure like any other.
        onError: { target: 'aborted', actions: assign({ outcome: ({ event }) => failed('INTERNAL_ERROR', `Internal error: ${String((event.error as Error)?.message ?? event.error)}`) }) },
      },
      on: {
        'install.progress': {
          actions: assign(({ context, event }) => ({
            name: event.name ?? context.name, source: event.source ?? context.source,
            filesDone: event.filesDone ?? context.filesDone, filesTotal: event.filesTotal ?? context.filesTotal, bytes: event.bytes ?? context.bytes,
          })),
        },
        'install.written': { target: 'installed', actions: assign({ outcome: ({ event }) => event.outcome }) },
        'install.failed': { target: 'aborted', actions: assign({ outcome: ({ context, event }) => context.cancelled ?? failed(event.code, event.message) }) },
        'install.cancel': {
          guard: ({ context }) => context.cancelled === null,
          actions: [assign({ cancelled: ({ event }) => failed(event.code, event.message) }), sendTo('stage', { type: 'install.abort' })],
        },
      },
    },
    installed: { type: 'final' },
    aborted: { type: 'final' },
  },
  output: ({ context }) => context.outcome ?? failed('INTERNAL_ERROR', 'Internal error: install ended without an outcome'),
});
