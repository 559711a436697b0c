// What a request no route takes is answered with: 405 METHOD_NOT_ALLOWED with an `Allow` header when
// its path has routes for other methods (RFC 9110 15.5.6), 404 NOT_FOUND when no route has its path.
// Console paths get the console's HTML error page; everything else the JSON envelope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, type SikaError } from '../lib/errors.ts';

interface RouteOfPath {
  pattern: RegExp;
  methods: Set<string>;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A route's URL as a regular expression over raw request paths, as the router reads it: a segment with a
 * parameter (`:id`, `po_:id`) takes any segment, even an empty one (`/sessions/` reaches `/sessions/:id`),
 * `*` takes the rest of the path.
 */
export function routePattern(url: string): RegExp {
  const segments = url.split('/').map((segment) => {
    if (segment === '*') return '.*';
    if (segment.includes(':')) return '[^/]*';
    return escapeRegExp(segment).replace(/\\\*$/, '.*');
  });
  return new RegExp(`^${segments.join('/')}$`);
}

/** The methods the registered routes take on `path`, sorted (the router finds a route for exactly these). */
export function methodsOfPath(routes: readonly RouteOfPath[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) if (route.pattern.test(path)) for (const method of route.methods) methods.add(method);
  return [...methods].sort();
}

/** Groups registered routes by URL, each with its pattern. */
export function routesByPath(registered: readonly { method: string; url: string }[]): RouteOfPath[] {
  const byUrl = new Map<string, RouteOfPath>();
  for (const { method, url } of registered) {
    const route = byUrl.get(url) ?? { pattern: routePattern(url), methods: new Set<string>() };
    route.methods.add(method.toUpperCase());
    byUrl.set(url, route);
  }
  return [...byUrl.values()];
}

/** Replies with a refusal: the JSON envelope, or on a console path the consoles' HTML error page (app.ts says which). */
export type ProblemSender = (
  request: FastifyRequest,
  reply: FastifyReply,
  problem: SikaError,
) => FastifyReply | Promise<FastifyReply>;

/**
 * The not-found handler: 405 with Allow, or 404. `registered` is every route as registered (app.ts's onRoute
 * hook, HEAD beside each GET); read on the first miss, when the app is ready and every route is in it.
 */
export function registerUnroutedHandler(
  app: FastifyInstance,
  registered: readonly { method: string; url: string }[],
  sendProblem: ProblemSender,
): void {
  let routes: RouteOfPath[] | null = null;
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    routes ??= routesByPath(registered);
    const allowed = methodsOfPath(routes, path);
    if (allowed.length === 0)
      return sendProblem(request, reply, errors.routeNotFound(request.method, path.slice(0, 200)));
    reply.header('allow', allowed.join(', '));
    return sendProblem(request, reply, errors.methodNotAllowed(request.method, allowed));
  });
}
