import { actionsFeature } from './features/actions.js';
import { bashFeature } from './features/bash.js';
import { capabilitiesFeature } from './features/capabilities.js';
import { documentsFeature } from './features/documents.js';
import { eventsFeature } from './features/events.js';
import { inspectorFeature } from './features/inspector.js';
import { installFeature } from './features/install.js';
import { mcpFeature } from './features/mcp.js';
import { sandboxFeature } from './features/sandbox.js';
import { tracesFeature } from './features/traces.js';
import type { Feature, FeatureHost } from './features/types.js';
import type { LoomSystem } from './actors/system.js';
import type { RouteModule } from './http/app.js';
import type { FastRoute } from './http/context.js';
import type { UpgradeHandler } from './http/upgrade.js';
import type { Surface, WireDescription } from './domain/wire.js';

/** The features of this build, in order. Each later issue adds one line here. */
export const features: Feature[] = [
  mcpFeature,
  documentsFeature,
  actionsFeature,
  eventsFeature,
  capabilitiesFeature,
  installFeature,
  bashFeature,
  sandboxFeature,
  tracesFeature,
  inspectorFeature,
];

/**
 * The optional surface of a feature: a wire without that surface does not mount it (behaviour.md §11:
 * the user wire has no /mcp, webhooks, event stream, /capabilities or /fs). Unlisted features mount
 * on every wire.
 */
const SURFACES = new Map<Feature, Surface>([[mcpFeature, 'mcp'], [eventsFeature, 'events'], [capabilitiesFeature, 'capabilities']]);

/**
 * Build every feature the wire serves and hand its system part to `system` (before the system
 * starts); returns the HTTP parts.
 */
export async function installFeatures(system: LoomSystem, host: FeatureHost, wire: WireDescription): Promise<{ routes: RouteModule[]; fastRoutes: FastRoute[]; upgrades: Map<string, UpgradeHandler> }> {
  const routes: RouteModule[] = [];
  const fastRoutes: FastRoute[] = [];
  const upgrades = new Map<string, UpgradeHandler>();
  for (const f of features) {
    const surface = SURFACES.get(f);
    if (surface !== undefined && !wire.surfaces.includes(surface)) continue;
    const c = await f(host);
    system.install(c);
    routes.push(...(c.routes ?? []));
    fastRoutes.push(...(c.fastRoutes ?? []));
    for (const [path, handler] of Object.entries(c.upgrades ?? {})) upgrades.set(path, handler);
  }
  return { routes, fastRoutes, upgrades };
}
