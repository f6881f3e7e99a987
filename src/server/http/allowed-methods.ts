/**
 * Which methods a path is served under: what a 405 answer names in its `Allow` header when a request's path exists
 * under other methods than its own (RFC 9110 §15.5.6), where a path served under no method is a 404.
 *
 * Fastify's router answers only "no route for this method and path", so every route the app adds is also put, as its
 * `onRoute` hook sees it, in a second find-my-way router (the router Fastify itself uses, with the same options): a
 * parameterised path (`/v1/sites/:id`) is matched there exactly as Fastify matches it. HEAD is in it wherever Fastify
 * serves HEAD for a GET route (its own HEAD routes pass through `onRoute` too).
 */
import FindMyWay from 'find-my-way';
import type { FastifyInstance, RouteOptions } from 'fastify';

type Method = FindMyWay.HTTPMethod;

/** The order of the methods in an `Allow` header: the common ones first, then any other alphabetically. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function byOrder(a: string, b: string): number {
  const [i, j] = [ORDER.indexOf(a), ORDER.indexOf(b)];
  if (i !== -1 || j !== -1) return (i === -1 ? ORDER.length : i) - (j === -1 ? ORDER.length : j);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The methods a request's path is served under, in `Allow` order, when they are other methods than its own: empty when
 * the path is served under none, or under the request's own method (a route that answered "not found" itself, with
 * `reply.callNotFound()`: the path is served, what it names is not there).
 */
export type AllowedMethods = (method: string, url: string) => string[];

/**
 * Adds the `onRoute` hook that records every route added to `app` after it (call it before any route is added), and
 * returns the look-up. Fastify's router options are the app's (its initial config), so a path matches here as there.
 */
export function trackAllowedMethods(app: FastifyInstance): AllowedMethods {
  const config = app.initialConfig as typeof app.initialConfig & { routerOptions?: Record<string, unknown> };
  const option = <T>(name: string, fallback: T): T =>
    ((config.routerOptions?.[name] ?? (config as Record<string, unknown>)[name]) as T | undefined) ?? fallback;
  // useSemicolonDelimiter is an option of find-my-way its typings do not list.
  const router = FindMyWay({
    caseSensitive: option('caseSensitive', true),
    ignoreTrailingSlash: option('ignoreTrailingSlash', false),
    ignoreDuplicateSlashes: option('ignoreDuplicateSlashes', false),
    maxParamLength: option('maxParamLength', 100),
    useSemicolonDelimiter: option('useSemicolonDelimiter', false),
    allowUnsafeRegex: true, // whatever Fastify accepted; this router only matches
  } as FindMyWay.Config<FindMyWay.HTTPVersion.V1>);
  const methods = new Set<string>();
  const noop = () => undefined;

  const add = (method: string, url: string): void => {
    if (router.findRoute(method as Method, url) !== null) return;
    router.on(method as Method, url, noop);
    methods.add(method);
  };

  app.addHook('onRoute', (route: RouteOptions & { routePath?: string; prefix?: string; prefixTrailingSlash?: string }) => {
    if (route.constraints && Object.keys(route.constraints).length > 0) return; // no route here is constrained (host, version)
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      add(method, route.url);
      // A plugin's '/' route is served at its prefix with and without the slash; Fastify runs onRoute for one of them.
      if (route.routePath === '' && route.prefix && (route.prefixTrailingSlash ?? 'both') === 'both' && !option('ignoreTrailingSlash', false)) {
        add(method, `${route.url}/`);
      }
    }
  });

  return (method, url) => {
    const allowed = [...methods].filter((other) => router.find(other as Method, url) !== null);
    return allowed.includes(method) ? [] : allowed.sort(byOrder);
  };
}
