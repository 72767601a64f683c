import type { AnyStateMachine } from 'xstate';
import { agentMachine } from '../machines/agent.js';
import { capabilityMachine } from '../machines/capability.js';
import { topicQueueMachine } from '../machines/topicQueue.js';
import { webhookTokenMachine } from '../machines/webhookToken.js';

/**
 * GET /inspect/machines (behaviour.md §13.1): every machine of the tree as states and transitions,
 * read from the machine definitions themselves (never a hand-kept copy), so the inspector page can
 * draw each one and a change to a machine shows on the page without anyone editing a second file.
 */

/** One state of a machine; `id` is its dotted path below the machine (`idle`, `a.b`). */
export interface MachineStateView {
  id: string;
  /** The enclosing state's id, or null at the top level. */
  parent: string | null;
  type: string;
  /** The initial child of a compound state, or null. */
  initial: string | null;
}

/** One transition: `source` null means "from any state" (declared on the machine itself). */
export interface MachineTransitionView {
  source: string | null;
  /** Target state ids; empty when the transition stays where it is (actions only). */
  targets: string[];
  /** The event as a reader names it: `command.arrive`, `after ttlTimer`, `always`. */
  event: string;
  guard: string | null;
}

/** The drawable form of one machine. */
export interface MachineView {
  id: string;
  initial: string | null;
  states: MachineStateView[];
  transitions: MachineTransitionView[];
}

/** The parts of an XState state node read here (StateNode's public fields). */
interface NodeLike {
  id: string;
  key: string;
  type: string;
  path: string[];
  states: Record<string, NodeLike>;
  initial?: { target?: NodeLike[] };
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
}

interface TransitionLike {
  target?: NodeLike[] | undefined;
  guard?: unknown;
}

/** The machines every daemon has (behaviour.md §13.1); features add theirs (install, shell). */
export const CORE_MACHINES: readonly AnyStateMachine[] = [topicQueueMachine, capabilityMachine, webhookTokenMachine, agentMachine];

const stateId = (n: NodeLike): string => n.path.join('.');

/** `xstate.after.<delay>.<state id>` → `after <delay>`; other event types unchanged. */
function eventName(type: string, node: NodeLike): string {
  const suffix = `.${node.id}`;
  if (type.startsWith('xstate.after.') && type.endsWith(suffix)) return `after ${type.slice('xstate.after.'.length, -suffix.length)}`;
  return type;
}

function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  return 'guarded';
}

function transitionsOf(node: NodeLike, isRoot: boolean): MachineTransitionView[] {
  const source = isRoot ? null : stateId(node);
  const view = (event: string, t: TransitionLike): MachineTransitionView => ({
    source, event, guard: guardName(t.guard), targets: (t.target ?? []).map(stateId),
  });
  const out: MachineTransitionView[] = [];
  for (const [type, list] of node.transitions) for (const t of list) out.push(view(eventName(type, node), t));
  for (const t of node.always ?? []) out.push(view('always', t));
  return out;
}

/** The drawable form of one machine definition. */
export function describeMachine(machine: AnyStateMachine): MachineView {
  const root = machine.root as unknown as NodeLike;
  const states: MachineStateView[] = [];
  const transitions: MachineTransitionView[] = transitionsOf(root, true);
  const walk = (node: NodeLike, parent: string | null) => {
    for (const child of Object.values(node.states)) {
      const id = stateId(child);
      const initial = child.initial?.target?.[0];
      states.push({ id, parent, type: child.type, initial: initial ? stateId(initial) : null });
      transitions.push(...transitionsOf(child, false));
      walk(child, id);
    }
  };
  walk(root, null);
  const initial = root.initial?.target?.[0];
  return { id: machine.id, initial: initial ? stateId(initial) : null, states, transitions };
}

/** Every machine by id (later entries with the same id replace earlier ones). */
export function machineCatalogue(machines: readonly AnyStateMachine[]): Record<string, MachineView> {
  const out: Record<string, MachineView> = Object.create(null) as Record<string, MachineView>;
  for (const m of machines) out[m.id] = describeMachine(m);
  return out;
}
