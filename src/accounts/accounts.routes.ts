/** The accounts feature's HTTP surface: /auth/* and /me. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/openapi.js';
import { authRoutes } from './auth.routes.js';
import { meRoutes } from './me.routes.js';
import { twoFactorRoutes } from './two-factor.routes.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { Mailer } from '../email/mailer.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & { mailer: Mailer };

export function accountRoutes(deps: Deps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  app.route('/', authRoutes(deps));
  app.route('/', meRoutes(deps));
  app.route('/', twoFactorRoutes(deps));
  return app;
}
