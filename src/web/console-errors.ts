// Errors the router raises before a console route is matched (an over-long or malformed path segment)
// get the consoles' HTML error page, as their own error handlers render it, never the API's JSON envelope.
import type { FastifyReply } from 'fastify';
import type { AppError } from '../http/errors.ts';
import type { ConsoleKind } from './auth.ts';
import { sendPage } from './console.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

const CONSOLE_PATH = /^\/(dashboard|ops)(?:[/?#]|$)/;

/** The console a raw request URL belongs to, or null for the API and the payer pages. */
export function consoleOfUrl(url: string): ConsoleKind | null {
  const match = CONSOLE_PATH.exec(url);
  if (!match) return null;
  return match[1] === 'dashboard' ? 'merchant' : 'operator';
}

/** The error page without a session: nothing is known about the caller yet, so nothing else is shown. */
export function sendConsoleErrorPage(reply: FastifyReply, kind: ConsoleKind, error: AppError): FastifyReply {
  const home = kind === 'merchant' ? '/dashboard' : '/ops';
  if (error.extra.headers) reply.headers(error.extra.headers);
  return sendPage(reply, page({ title: 'Error', session: null, kind, flash: { message: error.message, error: true }, body: html`<p><a href="${home}">Back</a></p>` }), error.statusCode);
}
