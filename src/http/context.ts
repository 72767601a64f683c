import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoomSystem } from '../actors/system.js';
import type { WireDescription } from '../domain/wire.js';
import type { UpgradeHandler } from './upgrade.js';

/**
 * A hot route answered before Express (`POST /exec`, the /fs plane): `matches` picks its requests,
 * anything else goes to the app; `handle` answers, throwing LoomError for refusals. It is put behind
 * the app's one entry check and error renderer by `http/fastPath.ts`, never on its own.
 */
export interface FastRoute {
  matches(req: IncomingMessage): boolean;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** A fast route behind the entry check: returns true when it took the request. */
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
  /** Fast paths (POST /exec, the /fs plane), tried in order before the Express app. */
  fastPaths: FastPath[];
  /** Handlers of HTTP upgrades by exact path (behind the Host/Origin guard; another path: 404). */
  upgrades: Map<string, UpgradeHandler>;
}
