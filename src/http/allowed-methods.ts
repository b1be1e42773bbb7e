/**
 * Which methods a path answers to, from the app's own route table: the Allow header of a 405, and
 * the body guard's test that a request will reach a route at all (unknown routes and wrong methods
 * answer 404/405 whatever the body holds).
 */

/** The part of a hono app this reads: its registered routes. */
export interface RouteTable {
  readonly routes: ReadonlyArray<{ method: string; path: string }>;
}

interface RoutePattern {
  method: string;
  re: RegExp;
}

const patternCache = new WeakMap<RouteTable, RoutePattern[]>();

/** Answers by path, kept for the most recent paths (a POST /invoices asks on every request). */
const allowedByPath = new WeakMap<RouteTable, Map<string, string[]>>();
const ALLOWED_PATHS_KEPT = 512;

/** The methods `path` answers to, sorted; HEAD wherever GET is; empty for a path no route matches. */
export function allowedMethods(app: RouteTable, path: string): string[] {
  let byPath = allowedByPath.get(app);
  if (!byPath) {
    byPath = new Map();
    allowedByPath.set(app, byPath);
  }
  let allowed = byPath.get(path);
  if (!allowed) {
    allowed = matchAllowedMethods(app, path);
    // Paths are the client's: the map is bounded, and simply starts over when full.
    if (byPath.size >= ALLOWED_PATHS_KEPT) byPath.clear();
    byPath.set(path, allowed);
  }
  return allowed;
}

function matchAllowedMethods(app: RouteTable, path: string): string[] {
  let patterns = patternCache.get(app);
  if (!patterns) {
    patterns = app.routes.filter((r) => r.method !== 'ALL').map((r) => ({ method: r.method, re: routeRegExp(r.path) }));
    patternCache.set(app, patterns);
  }
  const methods = new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

/** A hono route path as an anchored pattern: `:param` matches one segment, a trailing `/*` the rest. */
function routeRegExp(routePath: string): RegExp {
  const escaped = routePath.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\/\*$/, '/.*').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`);
}
