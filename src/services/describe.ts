import type { LoomSystem } from '../actors/system.js';
import { FIELD_FILE_BYTES, FS_MAX_BYTES, REQUEST_BODY_BYTES, WEBHOOK_BODY_BYTES } from '../domain/limits.js';
import type { LimitName, WireDescription } from '../domain/wire.js';

/**
 * The GET /describe document (spec §4.9, behaviour.md §9.3): name, version, protocol, instance, the
 * features' capability entries, the limits the wire shows, and (on the agent wire, behaviour.md §15)
 * the sandbox this daemon can give.
 */
export function describeDocument(system: LoomSystem, wire: WireDescription): Record<string, unknown> {
  const { info } = system.services;
  // The values of every /describe limit; the wire says which it shows (behaviour.md §9.3, §11).
  const limits: Record<LimitName, number> = {
    'fs.max_bytes': FS_MAX_BYTES, request_body_bytes: REQUEST_BODY_BYTES, webhook_body_bytes: WEBHOOK_BODY_BYTES,
    queue_max: system.limits.max, queue_wait_ms: system.limits.waitMs, field_file_bytes: FIELD_FILE_BYTES,
  };
  return {
    name: 'loom', version: info.version, protocol: '0.1', wire: info.wire,
    instance: { role: info.role, label: info.label },
    capabilities: system.describeCapabilities(),
    limits: Object.fromEntries(wire.limits.map((name) => [name, limits[name]])),
    ...(wire.featureCapabilities ? { sandbox: { ...(info.sandboxSupport?.() ?? { available: false, mechanism: 'landlock', abi: 0 }), default: info.sandbox ?? 'none' } } : {}),
    // behaviour.md §17: which native parts this daemon has, and why one is missing.
    ...(wire.featureCapabilities && info.nativeParts ? { native: info.nativeParts() } : {}),
  };
}
