// Provider notifications: POST /api/v1/providers/paystack/webhook (signed: HMAC-SHA512 of the raw body
// with the secret key, checked before the body is parsed) and PUT or POST
// /api/v1/providers/mtn-momo/callback (unsigned: a hint to ask MTN). In the API document under
// "Provider notifications": merchants never call them; operators register them with the providers.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../schemas.ts';
import type { AppDeps } from '../../deps.ts';
import { errors } from '../../../lib/errors.ts';
import { handleMtnCallback, handlePaystackEvent } from '../../../providers/service.ts';

/** A provider notification body larger than this is refused (theirs are a few KB). */
const NOTIFICATION_BYTES_MAX = 256 * 1024;

export async function providerRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const eventDeps = {
    db: deps.db,
    checkoutUrlHost: deps.config.checkoutUrlHost,
    providers: deps.providers,
    log: app.log,
  };
  // The raw bytes are what Paystack signed: keep them, parse only after the signature holds.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: NOTIFICATION_BYTES_MAX }, (_request, body, done) =>
    done(null, body),
  );
  app.addHook('preHandler', deps.limiters.perIp);

  const tags = ['Provider notifications'];
  const Received = Type.Object(
    { received: Type.Boolean(), result: Type.String({ description: 'applied, duplicate, ignored or deferred' }) },
    { description: 'Received; result says what Sika did with it.' },
  );
  const paystackSchema = {
    operationId: 'receivePaystackWebhook',
    tags,
    summary: 'Paystack webhook (register it in the Paystack dashboard)',
    description:
      'Signed by Paystack: x-paystack-signature is the hex HMAC-SHA512 of the raw body keyed with PAYSTACK_SECRET_KEY, checked before the body is read. Each event only makes Sika verify the transaction or transfer with Paystack. No Idempotency-Key (Paystack sends none): events are deduplicated by their own identity, and a repeat of one already handled is answered 200 with result duplicate, without a second verify.',
    response: { 200: Received, ...errorResponses(400, 401, 404, 429, 503) },
  };
  const mtnSchema = {
    tags,
    summary: 'MTN MoMo callback (sent as X-Callback-Url with each request)',
    description:
      'Unsigned, so never trusted: it only makes Sika ask MTN for the status of the transaction it names. No Idempotency-Key (MTN sends none) and none needed: a repeat only asks again, and an answer already applied changes nothing (the status tables allow each move once).',
    response: { 200: Received, ...errorResponses(404, 429) },
  };

  app.post('/api/v1/providers/paystack/webhook', { schema: paystackSchema }, async (request, reply) => {
    const paystack = deps.providers.plumbing.paystack;
    if (!paystack) throw errors.notFound('Paystack webhook');
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const signature = request.headers['x-paystack-signature'];
    if (!paystack.verifyWebhook(raw, typeof signature === 'string' ? signature : undefined)) {
      request.log.warn('Paystack webhook with a bad or missing signature refused');
      throw errors.unauthorized('The webhook signature does not match.');
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw errors.invalidArgument('The webhook body is not JSON.');
    }
    try {
      const verdict = await handlePaystackEvent(eventDeps, paystack.parseWebhook(body));
      return reply.code(200).send({ received: true, result: verdict });
    } catch (error) {
      // Paystack retries a webhook that is not answered 200: nothing was recorded as handled, so the retry redoes it.
      request.log.warn({ err: error }, 'Paystack webhook could not be applied yet');
      throw errors.unavailable('The event could not be applied yet; send it again later.');
    }
  });

  const mtnCallback = async (request: { body: unknown; query: unknown }) => {
    const mtn = deps.providers.plumbing.mtnMomo;
    if (!mtn) throw errors.notFound('MTN MoMo callback');
    let body: unknown = null;
    if (Buffer.isBuffer(request.body) && request.body.length > 0) {
      try {
        body = JSON.parse(request.body.toString('utf8'));
      } catch {
        body = null; // unsigned and only a hint: an unreadable one is dropped, not an error for MTN to retry
      }
    }
    try {
      return {
        received: true,
        result: await handleMtnCallback(
          eventDeps,
          mtn.parseCallback(body, (request.query ?? {}) as Record<string, string | undefined>),
        ),
      };
    } catch (error) {
      // MTN calls back once and never retries: the status checks ask about the transaction at their next turn.
      app.log.warn({ err: error }, 'MTN MoMo callback could not be applied now; status checks will ask');
      return { received: true, result: 'deferred' };
    }
  };
  // MTN sends PUT or POST: one operation each in the API document (operationIds are unique).
  app.put(
    '/api/v1/providers/mtn-momo/callback',
    { schema: { ...mtnSchema, operationId: 'putMtnMomoCallback' } },
    mtnCallback,
  );
  app.post(
    '/api/v1/providers/mtn-momo/callback',
    { schema: { ...mtnSchema, operationId: 'postMtnMomoCallback' } },
    mtnCallback,
  );
}
