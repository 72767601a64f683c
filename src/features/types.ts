import type { SystemContribution } from '../actors/contributions.js';
import type { AgentDirectory } from '../actors/directory.js';
import type { Inspection } from '../services/inspection.js';
import type { DaemonInfo } from '../commands/types.js';
import type { AgentStore, Clock, EnvStore } from '../domain/ports.js';
import type { RouteModule } from '../http/app.js';
import type { FastRoute } from '../http/context.js';
import type { UpgradeHandler } from '../http/upgrade.js';
import type { StateFolders } from '../stores/leftovers.js';

/**
 * What a feature gets at start-up (architecture.md "features plug into the tree"): the directory
 * of the actor tree it talks to by events, the inspection it reports to, the daemon's settings and
 * stores. Never the system facade: nothing calls back up from a feature into it.
 */
export interface FeatureHost {
  directory: AgentDirectory;
  inspection: Inspection;
  info: DaemonInfo;
  clock: Clock;
  /** The agent registry: read at start-up, written behind the actors. */
  agents: AgentStore;
  env: EnvStore;
  /** Which agents had a state folder at start-up (start-up reads skip the others). */
  stateFolders: StateFolders;
  /** Origins accepted besides loopback (SVC_ALLOWED_ORIGINS, behaviour.md §9.2). */
  allowedOrigins: string[];
  /** `loom daemon --record <file>`: record every command from start-up into this file (behaviour.md §14.1). */
  recordTo?: string;
  /** SVC_GITHUB_API (behaviour.md §1.1, §7.3). */
  githubApi: string;
}

/**
 * Everything a feature adds, typed (architecture.md "features plug in"): its part of the running
 * system (commands, hubs, services, /describe entries, POST and DELETE /agents steps, shutdown) and
 * its HTTP surface (route modules, fast paths tried before Express).
 */
export interface FeatureContribution extends SystemContribution {
  routes?: RouteModule[];
  fastRoutes?: FastRoute[];
  /** HTTP upgrade handlers by exact path (behind the Host/Origin guard of the upgrade hook). */
  upgrades?: Record<string, UpgradeHandler>;
}

/** A feature plug-in: builds its contribution once at start-up. */
export type Feature = (host: FeatureHost) => FeatureContribution | Promise<FeatureContribution>;
