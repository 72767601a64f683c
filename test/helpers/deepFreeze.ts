import type { AnyActorRef, InspectionEvent } from 'xstate';

/**
 * Deep freezing for tests of "context holds data, changed only by `assign`" (architecture.md "One
 * read model"): after a freeze any in-place write throws (ES modules run in strict mode), so a suite
 * run over frozen topic contexts fails where a command writes its session instead of returning a
 * change.
 */

const refuse = (what: string) => () => {
  throw new TypeError(`write to a frozen ${what}`);
};

/**
 * Freeze `value` and everything it reaches. Maps and Sets get throwing `set`/`add`/`delete`/`clear`
 * (Object.freeze alone does not stop them). What cannot be frozen (a buffer's bytes) or is not data
 * (a function) is reported in `problems` with its path.
 */
export function deepFreeze(value: unknown, problems: string[] = [], path = '$'): string[] {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'function') problems.push(`${path}: a function`);
    return problems;
  }
  if (Object.isFrozen(value)) return problems;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    problems.push(`${path}: ${value.constructor.name} of ${value.byteLength} bytes`);
    return problems;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) {
      deepFreeze(k, problems, `${path}.keys`);
      deepFreeze(v, problems, `${path}.get(${String(k)})`);
    }
    for (const m of ['set', 'delete', 'clear']) Object.defineProperty(value, m, { value: refuse('Map') });
  } else if (value instanceof Set) {
    for (const v of value) deepFreeze(v, problems, `${path}.values`);
    for (const m of ['add', 'delete', 'clear']) Object.defineProperty(value, m, { value: refuse('Set') });
  }
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key);
    // Methods shadowed above are ours; accessors are not data and are reported by their own value below.
    if (d && 'value' in d && !(typeof d.value === 'function' && (value instanceof Map || value instanceof Set))) deepFreeze(d.value, problems, `${path}.${String(key)}`);
  }
  return problems;
}

/** Whether `value` and everything it reaches is frozen (Maps and Sets with their writers shadowed). */
export function isDeepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (!Object.isFrozen(value)) return false;
  if ((value instanceof Map || value instanceof Set) && !Object.hasOwn(value, 'delete')) return false;
  if (value instanceof Map) return [...value].every(([k, v]) => isDeepFrozen(k) && isDeepFrozen(v));
  if (value instanceof Set) return [...value].every(isDeepFrozen);
  return Reflect.ownKeys(value).every((k) => {
    const d = Object.getOwnPropertyDescriptor(value, k);
    return !d || !('value' in d) || typeof d.value === 'function' || isDeepFrozen(d.value);
  });
}

/**
 * Freeze every topic actor's context as soon as a snapshot holds it (before the command it starts
 * reads it). Returns what could not be frozen, as it is found.
 */
export function freezeTopicContexts(observe: (observer: (ev: InspectionEvent) => void) => () => void): { problems: string[]; stop(): void } {
  const problems: string[] = [];
  const stop = observe((ev) => {
    if (ev.type !== '@xstate.snapshot') return;
    const ref = ev.actorRef as AnyActorRef & { logic?: { id?: string } };
    if (ref.logic?.id !== 'topicQueue') return;
    deepFreeze((ev.snapshot as { context?: unknown }).context, problems, `${ref.id}.context`);
  });
  return { problems, stop };
}
