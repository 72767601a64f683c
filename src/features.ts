import type { CommandRegistry } from './commands/registry.js';
import type { AppContext } from './http/context.js';
import type { RouteModule } from './http/app.js';
import { mcpFeature } from './features/mcp.js';
import { documentsFeature } from './features/documents.js';
import { actionsFeature } from './features/actions.js';
import { eventsFeature } from './features/events.js';
import { capabilitiesFeature } from './features/capabilities.js';

/**
 * A feature plugs into the composed daemon: it may register commands, add route modules, add
 * DELETE /agents cascade steps, registration extensions, shutdown hooks and /describe entries.
 */
export type Feature = (ctx: AppContext, registry: CommandRegistry) => Promise<RouteModule[] | void> | RouteModule[] | void;

/** The features of this build, in order. Each later issue adds one line here. */
export const features: Feature[] = [
  mcpFeature,
  documentsFeature,
  actionsFeature,
  eventsFeature,
  capabilitiesFeature,
];

/** Install every feature; returns the route modules they add. */
export async function installFeatures(ctx: AppContext, registry: CommandRegistry): Promise<RouteModule[]> {
  const routes: RouteModule[] = [];
  for (const f of features) routes.push(...((await f(ctx, registry)) ?? []));
  return routes;
}
