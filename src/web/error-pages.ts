// The one HTML error renderer. Every page surface (the two consoles and the payer page) answers an
// error the same way: the status from the code's entry in src/http/errors.ts, Retry-After when a retry
// time is known, 5xx logged whole and shown without detail. Only the page drawn around the message
// differs; the API's JSON envelope is error-handler.ts's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { logRequestError, toSikaError } from '../http/error-handler.ts';
import { errorHeaders, statusOf } from '../http/errors.ts';
import type { SikaError } from '../lib/errors.ts';
import type { ConsoleKind, WebSession } from './auth.ts';
import { sendPage } from './console.ts';
import { consoleSentence } from './console-messages.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

/** Draws the page for an error whose status is already set. */
export type ErrorPageRenderer = (
  reply: FastifyReply,
  error: SikaError,
  status: number,
  request: FastifyRequest,
) => FastifyReply | Promise<FastifyReply>;

/** Sends `error` as a page drawn by `render`. */
export function sendErrorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  error: SikaError,
  render: ErrorPageRenderer,
) {
  reply.headers(errorHeaders(error));
  return render(reply, error, statusOf(error), request);
}

/** Makes `render` the error handler of a page surface (a Fastify encapsulated plugin). */
export function registerErrorPages(app: FastifyInstance, what: string, render: ErrorPageRenderer): void {
  app.setErrorHandler((error: unknown, request, reply) => {
    const problem = toSikaError(error, request.headers['content-type']);
    logRequestError(request, error, problem, `${what} request failed`);
    return sendErrorPage(request, reply, problem, render);
  });
}

/** A console's error page: the message in the console's layout, with a way back. */
export const consoleErrorPage =
  (kind: ConsoleKind): ErrorPageRenderer =>
  (reply, error, status, request) => {
    const session: WebSession | null = request.webSession ?? null;
    const back =
      kind === 'merchant'
        ? html`<p><a href="/dashboard">Back to the dashboard</a></p>`
        : html`<p><a href="/ops">Back</a></p>`;
    return sendPage(
      reply,
      page({
        title: 'Error',
        session,
        kind,
        flash: { message: consoleSentence(error.message), error: true },
        body: back,
      }),
      status,
    );
  };

/**
 * A refused console form: the message to show above the form again and the status to answer with.
 * A 5xx is not the user's to fix: it is rethrown for the surface's error handler (logged, no detail).
 */
export function formRefusal(error: unknown): { flash: { message: string; error: true }; status: number } {
  const problem = toSikaError(error);
  const status = statusOf(problem);
  if (status >= 500) throw error;
  return { flash: { message: consoleSentence(problem.message), error: true }, status };
}

const CONSOLE_PATH = /^\/(dashboard|ops)(?:[/?#]|$)/;

/** The console a raw request URL belongs to, or null for the API and the payer pages. */
export function consoleOfUrl(url: string): ConsoleKind | null {
  const match = CONSOLE_PATH.exec(url);
  if (!match) return null;
  return match[1] === 'dashboard' ? 'merchant' : 'operator';
}
