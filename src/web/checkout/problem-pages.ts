// The problem pages of the payer's public pages (the payer page /pay/{id} and a payment link's /l/{slug}): a
// page in the payer page's style with the HTTP status, the not-found page each surface words its own way, and
// the page of an error its handler caught (429: wait; 5xx: our side, no detail; else the error's message).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SikaError } from '../../lib/errors.ts';
import type { Assets } from './page-model.ts';
import { renderProblemPage } from './render.ts';

type Sender = (request: FastifyRequest, reply: FastifyReply, body: string, status?: number) => FastifyReply;

export interface ProblemPages {
  /** A problem page with this status, heading and text; `test`: with the Test bar (a Test object's page). */
  problem(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    heading: string,
    text: string,
    options?: { test?: boolean },
  ): FastifyReply;
  /** The surface's 404 page. */
  notFoundPage(request: FastifyRequest, reply: FastifyReply): FastifyReply;
  /** The page of an error a route threw, its status already decided (registerErrorPages). */
  errorPage(request: FastifyRequest, reply: FastifyReply, error: SikaError, status: number): FastifyReply;
}

export function problemPages(
  sendHtml: Sender,
  assets: Pick<Assets, 'css'>,
  notFound: { heading: string; text: string },
): ProblemPages {
  const problem: ProblemPages['problem'] = (request, reply, status, heading, text, options) =>
    sendHtml(request, reply, renderProblemPage(status, heading, text, assets, options), status);
  const notFoundPage: ProblemPages['notFoundPage'] = (request, reply) =>
    problem(request, reply, 404, notFound.heading, notFound.text);
  const errorPage: ProblemPages['errorPage'] = (request, reply, error, status) => {
    if (status === 404) return notFoundPage(request, reply);
    if (status === 429)
      return problem(
        request,
        reply,
        status,
        'Too many requests',
        `Please wait ${error.details.retryAfterSeconds ?? 1} seconds, then try again.`,
      );
    if (status >= 500)
      return problem(
        request,
        reply,
        status,
        'Something went wrong on our side',
        'No payment was made by this request. Please reload the page in a moment.',
      );
    return problem(request, reply, status, 'This request could not be completed', error.message);
  };
  return { problem, notFoundPage, errorPage };
}
