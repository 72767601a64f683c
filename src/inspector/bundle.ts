import { LoomError } from '../domain/errors.js';
import type { InspectionSnapshot } from '../services/inspectionSnapshot.js';
import type { MachineView } from '../services/machineCatalogue.js';

/** The `format` of an inspector bundle (behaviour.md §13.8). */
export const BUNDLE_FORMAT = 'loom-inspector-bundle';
/** The bundle version this daemon writes and reads. */
export const BUNDLE_VERSION = 1;

/**
 * GET /inspect/export (behaviour.md §13.8): the snapshot and the machine catalogue at one moment,
 * as a file a person can attach to a report and open later without a daemon (`loom inspect <file>`).
 */
export interface InspectorBundle {
  format: typeof BUNDLE_FORMAT;
  version: typeof BUNDLE_VERSION;
  exported_at: string;
  loom_version: string;
  state: InspectionSnapshot;
  machines: Record<string, MachineView>;
}

/**
 * The bundle of a snapshot and a catalogue. Both come from the inspection exactly as
 * GET /inspect/state and GET /inspect/machines send them (masked there, behaviour.md §13.4): nothing
 * is read here that the inspector does not already send.
 */
export function inspectorBundle(state: InspectionSnapshot, machines: Record<string, MachineView>): InspectorBundle {
  return { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, exported_at: state.at, loom_version: state.version, state, machines };
}

/** The suggested file name of a download: `loom-inspector-2026-01-05T10-00-00Z.json`. */
export function bundleFileName(exportedAt: string): string {
  return `loom-inspector-${exportedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}.json`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The bundle in `value` (parsed JSON), checked enough that the page can draw it: the format and
 * version, a snapshot with its time and agents, a machine catalogue. Throws a LoomError (400) naming
 * what is wrong; the page copes with anything else a well-formed bundle may leave out.
 */
export function checkBundle(value: unknown): InspectorBundle {
  if (!isObject(value) || value.format !== BUNDLE_FORMAT) throw new LoomError(400, `not a ${BUNDLE_FORMAT}`);
  if (value.version !== BUNDLE_VERSION) throw new LoomError(400, `${BUNDLE_FORMAT} version ${JSON.stringify(value.version)} is not supported (this Loom reads version ${BUNDLE_VERSION})`);
  const state = value.state;
  if (!isObject(state) || typeof state.at !== 'string' || Number.isNaN(Date.parse(state.at)) || !Array.isArray(state.agents)) {
    throw new LoomError(400, `${BUNDLE_FORMAT}: "state" is not an inspector snapshot (needs "at" and "agents")`);
  }
  if (!state.agents.every((a) => isObject(a) && typeof a.agent_id === 'string' && Array.isArray(a.topics))) {
    throw new LoomError(400, `${BUNDLE_FORMAT}: an agent of "state" has no "agent_id" or "topics"`);
  }
  if (!isObject(value.machines)) throw new LoomError(400, `${BUNDLE_FORMAT}: "machines" is not a machine catalogue`);
  if (typeof value.exported_at !== 'string' || Number.isNaN(Date.parse(value.exported_at))) throw new LoomError(400, `${BUNDLE_FORMAT}: "exported_at" is not a time`);
  return value as unknown as InspectorBundle;
}
