import express, { type Express } from 'express';
import { LoomError } from '../domain/errors.js';
import type { AppContext } from './context.js';
import { corsHeaders } from './guard.js';
import { entryCheck, errorRenderer, preflight } from './middleware.js';
import { mountLifecycle } from './routes/lifecycle.js';
import { mountAgents } from './routes/agents.js';
import { mountSessions } from './routes/sessions.js';
import { mountExec } from './routes/exec.js';

/** A route module: mounts its paths on the app (one file per spec §4 subsection). */
export type RouteModule = (app: Express, ctx: AppContext) => void;

/** Route modules in mount order; features add theirs with one line. */
export const routeModules: RouteModule[] = [mountLifecycle, mountAgents, mountSessions, mountExec];

/**
 * Build the Express app over a running system (architecture.md "build the app, do not import it").
 * No app-wide body parser: each route reads its body with its own cap.
 */
export function createApp(ctx: AppContext, extra: RouteModule[] = []): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // spec §4 (`X-Agent-Id`), behaviour.md §11 (`X-User-Id`): the wire's identity header.
  app.use(entryCheck({ cors: corsHeaders(ctx.wire.header), allowedOrigins: ctx.allowedOrigins, identity: ctx.wire }));
  app.use(preflight);
  for (const mount of [...routeModules, ...extra]) mount(app, ctx);
  app.use((req) => {
    throw new LoomError(404, `Not found: ${req.method} ${req.path}`);
  });
  app.use(errorRenderer);
  return app;
}
