import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoomSystem } from '../actors/system.js';
import type { WireDescription } from '../domain/wire.js';
import type { UpgradeHandler } from './upgrade.js';

/**
 * A handler tried before Express for a hot path; returns true when it took the request. It must keep
 * the app's rules (Host/Origin guard, CORS headers) and leave everything else to the app.
 */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** What routes get: the system facade and the daemon's settings. */
export interface AppContext {
  system: LoomSystem;
  /** The wire served (behaviour.md §11): header, resource and field names, error texts, topic grammar. */
  wire: WireDescription;
  /** Origins accepted besides loopback (SVC_ALLOWED_ORIGINS, behaviour.md §9.2). */
  allowedOrigins: string[];
  /** Called after POST /shutdown has answered (the daemon exits after the 50 ms grace). */
  onShutdown: () => void;
  /** Fast paths (the /fs plane), tried in order before the Express app. */
  fastPaths: FastPath[];
  /** Handlers of HTTP upgrades by exact path (behind the Host/Origin guard; none yet: 404). */
  upgrades: Map<string, UpgradeHandler>;
}
