// A payment link's public side (issue 35): GET /l/{slug} (the page), POST /l/{slug} (its form: 303 to the new
// session's payer page), and its QR code (qr.svg, qr.png) and printable poster (poster.pdf). Public like the
// payer page: the random slug is the capability.
//
// One rule for every path under /l/{slug}: an unknown slug is a 404 page; a link inactive, expired or used up
// answers 410 with a page saying which, the QR code and the poster included (a poster of a dead link should
// not be printed; a cached code still leads to the 410 page).
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkoutUrlOf } from '../../checkout/model.ts';
import {
  checkLinkForm,
  findLinkPage,
  type LinkForm,
  type LinkFormErrors,
  type LinkPage,
  readLinkForm,
  startLinkSession,
} from '../../checkout/payment-link-checkout.ts';
import { type LinkAvailability, linkAvailability, linkUrlOf } from '../../checkout/payment-link-model.ts';
import { liveRefusal } from '../../accounts/live-access.ts';
import type { AppDeps } from '../../http/deps.ts';
import { formatGhs } from '../../lib/ghana.ts';
import { registerErrorPages } from '../error-pages.ts';
import { posterPdf } from './link-poster.ts';
import { LINK_CSS, type LinkPageView, renderLinkPage } from './link-views.ts';
import { QR_PNG_MODULE_PX, qrPng, qrSvg } from './qr.ts';
import { problemPages } from './problem-pages.ts';
import { payerPageSender } from './send.ts';

const Params = Type.Object({ slug: Type.String() });
type Params = Static<typeof Params>;
/** How long a browser or a printer's proxy may keep a QR code: short, so a link turned off stops being served soon. */
const QR_CACHE_S = 300;

/** The link page's model: a fresh form, or the form as typed with what was refused in it. */
const linkPageView = (found: LinkPage, form: LinkForm | null = null, errors: LinkFormErrors = {}): LinkPageView => ({
  link: found.link,
  merchantName: found.merchantName,
  test: found.link.environment === 'test',
  form,
  errors,
});

/** What a payer reads on the 410 page, for each reason a link takes no payment. */
const GONE: Record<Exclude<LinkAvailability, 'available'>, { heading: string; text: (merchant: string) => string }> = {
  inactive: {
    heading: 'This payment link is turned off',
    text: (merchant) => `${merchant} no longer takes payments through this link. Nothing was charged.`,
  },
  expired: {
    heading: 'This payment link has expired',
    text: (merchant) => `The link's time is over. Nothing was charged. Ask ${merchant} for a new link.`,
  },
  used_up: {
    heading: 'This payment link has been used',
    text: (merchant) =>
      `It has taken every payment it was made for. Nothing was charged. Ask ${merchant} if you still need to pay.`,
  },
};

export async function paymentLinkPageRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const assets = { css: LINK_CSS };
  const styleHash = createHash('sha256').update(LINK_CSS).digest('base64');
  // No script at all: the page is a form.
  const csp = `default-src 'none'; style-src 'sha256-${styleHash}'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
  // The page's reads per client address; the form also on the payer endpoints' second budget (perSession, which
  // with no session id in the path counts per client address too), as every step that makes payer rows.
  const page = { schema: { hide: true, params: Params }, preHandler: deps.limiters.perIp };
  const form = { schema: { hide: true, params: Params }, preHandler: [deps.limiters.perIp, deps.limiters.perSession] };

  const sendHtml = payerPageSender(csp);

  const { problem, notFoundPage, errorPage } = problemPages(sendHtml, assets, {
    heading: 'We could not find this payment link',
    text: 'The link may be mistyped or incomplete. Check the link you were given, or ask the merchant for it again.',
  });

  registerErrorPages(app, 'payment link page', (reply, error, status, request) =>
    errorPage(request, reply, error, status),
  );

  /** The link of the path when a payer may use it now; otherwise the reply (404 or 410) has been sent. */
  async function usableLink(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    const found = await findLinkPage(deps.db, request.params.slug);
    if (!found) {
      await notFoundPage(request, reply);
      return null;
    }
    const availability = linkAvailability(found.link);
    if (availability !== 'available') {
      await gone(request, reply, found, availability);
      return null;
    }
    return found;
  }

  // A Test link's 410 page carries the Test bar, as its payer page does.
  const gone = (request: FastifyRequest, reply: FastifyReply, found: LinkPage, reason: keyof typeof GONE) =>
    problem(request, reply, 410, GONE[reason].heading, GONE[reason].text(found.merchantName), {
      test: found.link.environment === 'test',
    });

  /**
   * A Live link of a merchant not activated or suspended starts no payment (issue 33), as the payer page's
   * method choice: the page says payments are paused (403), on GET and POST alike. Test links always work.
   */
  async function paused(request: FastifyRequest, reply: FastifyReply, found: LinkPage): Promise<boolean> {
    if (found.link.environment !== 'live') return false;
    const standing = await deps.liveAccess.standing(found.link.merchant_id);
    if (standing !== null && liveRefusal(standing) === null) return false;
    await problem(
      request,
      reply,
      403,
      `Payments to ${found.merchantName} are paused`,
      'This merchant cannot take payments right now. Nothing was charged. Please contact the merchant, or try again later.',
    );
    return true;
  }

  app.get<{ Params: Params }>('/l/:slug', page, async (request, reply) => {
    const found = await usableLink(request, reply);
    if (!found || (await paused(request, reply, found))) return reply;
    return sendHtml(request, reply, renderLinkPage(linkPageView(found)));
  });

  app.post<{ Params: Params }>('/l/:slug', form, async (request, reply) => {
    const found = await usableLink(request, reply);
    if (!found || (await paused(request, reply, found))) return reply;
    const typed = readLinkForm(found.link, request.body);
    const checked = checkLinkForm(found.link, typed);
    if (!checked.ok) return sendHtml(request, reply, renderLinkPage(linkPageView(found, typed, checked.errors)), 422);
    const started = await startLinkSession(deps.db, found.link.id, checked.payment);
    if (started.kind === 'unavailable') return gone(request, reply, found, started.reason);
    return reply.redirect(checkoutUrlOf(deps.config.checkoutUrlHost, started.session.id), 303);
  });

  const linkUrl = (found: LinkPage) => linkUrlOf(deps.config.checkoutUrlHost, found.link.slug);

  app.get<{ Params: Params }>('/l/:slug/qr.svg', page, async (request, reply) => {
    const found = await usableLink(request, reply);
    if (!found) return reply;
    return reply
      .type('image/svg+xml')
      .header('cache-control', `public, max-age=${QR_CACHE_S}`)
      .header('content-security-policy', "default-src 'none'")
      .header('x-content-type-options', 'nosniff')
      .send(qrSvg(linkUrl(found), `QR code of the payment link ${found.link.name}`, { modulePx: QR_PNG_MODULE_PX }));
  });

  app.get<{ Params: Params }>('/l/:slug/qr.png', page, async (request, reply) => {
    const found = await usableLink(request, reply);
    if (!found) return reply;
    return reply
      .type('image/png')
      .header('cache-control', `public, max-age=${QR_CACHE_S}`)
      .header('x-content-type-options', 'nosniff')
      .send(qrPng(linkUrl(found)));
  });

  app.get<{ Params: Params }>('/l/:slug/poster.pdf', page, async (request, reply) => {
    const found = await usableLink(request, reply);
    if (!found) return reply;
    const pdf = await posterPdf({
      merchantName: found.merchantName,
      linkName: found.link.name,
      amountText: found.link.amount_minor === null ? 'Amount of your choice' : formatGhs(found.link.amount_minor),
      url: linkUrl(found),
      test: found.link.environment === 'test',
    });
    return reply
      .type('application/pdf')
      .header('cache-control', 'no-store')
      .header('content-disposition', `inline; filename="payment-link-${found.link.slug}.pdf"`)
      .header('x-content-type-options', 'nosniff')
      .send(pdf);
  });
}
