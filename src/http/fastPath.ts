import type { FastPath, FastRoute } from './context.js';
import { renderError } from './errors.js';
import { admit, type Edge } from './guard.js';

/**
 * A fast route behind the same entry check (`admit`: CORS headers, Host/Origin guard) and the same
 * error renderer as the Express app, so a request answered before Express obeys the same rules.
 */
export function fastPath(edge: Edge, route: FastRoute): FastPath {
  return (req, res) => {
    if (!route.matches(req)) return false;
    const refusal = admit(edge, req, res);
    if (refusal) renderError(req, res, refusal);
    else route.handle(req, res).catch((err: unknown) => renderError(req, res, err));
    return true;
  };
}
