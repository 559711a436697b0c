// The payment links API (issue 35): create and change (idempotent by Idempotency-Key), read, list. Thin:
// parse, authorize, call src/checkout/payment-links.ts.
import type { FastifyInstance } from 'fastify';
import { errors } from '../../../lib/errors.ts';
import type { ApiPrincipal } from '../../../lib/environment.ts';
import {
  createPaymentLink,
  getPaymentLink,
  listPaymentLinks,
  updatePaymentLink,
  type LinkOwner,
} from '../../../checkout/payment-links.ts';
import { principalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { idempotentPost, transactionWork } from '../../idempotency.ts';
import { described, errorResponses } from '../../schemas.ts';
import {
  CreatePaymentLinkBody,
  ListPaymentLinksQuery,
  PaymentLinkList,
  PaymentLinkParams,
  PaymentLinkResponse,
  UpdatePaymentLinkBody,
} from './payment-link-schemas.ts';

const tags = ['Payment links'];

const ownerOf = (principal: ApiPrincipal): LinkOwner => ({
  merchantId: principal.merchantId,
  environment: principal.environment,
  apiKeyId: principal.apiKeyId,
  userId: null,
});

export async function paymentLinkRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db, config } = deps;

  idempotentPost<{ Body: CreatePaymentLinkBody }>(
    app,
    '/api/v1/payment-links',
    {
      operationId: 'createPaymentLink',
      tags,
      summary: 'Create a payment link',
      description:
        'A page at url that any payer opens to pay you, without a server of yours: a fixed amount_minor, or an amount the payer chooses between amount_min_minor and amount_max_minor, with up to five custom fields the payer fills in. Each payment is an ordinary checkout session carrying payment_link_id and custom_fields. Event payment_link.created.',
      body: CreatePaymentLinkBody,
      response: {
        201: described(PaymentLinkResponse, 'The new link, active.'),
        ...errorResponses(400, 401, 409, 413, 415, 422, 429),
      },
    },
    async (request) => {
      const owner = ownerOf(principalOf(request));
      return transactionWork(201, (tx) => createPaymentLink(tx, owner, request.body, config.checkoutUrlHost));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/payment-links/:id',
    {
      schema: {
        operationId: 'retrievePaymentLink',
        tags,
        summary: 'Retrieve a payment link',
        description: "A link of the calling key's merchant and environment; other ids are 404.",
        params: PaymentLinkParams,
        response: {
          200: described(PaymentLinkResponse, 'The link, with how many payments it has taken.'),
          ...errorResponses(401, 404, 429),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const link = await getPaymentLink(
        db,
        principal.merchantId,
        principal.environment,
        request.params.id,
        config.checkoutUrlHost,
      );
      if (!link) throw errors.notFound('Payment link');
      return link;
    },
  );

  app.get<{ Querystring: ListPaymentLinksQuery }>(
    '/api/v1/payment-links',
    {
      schema: {
        operationId: 'listPaymentLinks',
        tags,
        summary: 'List payment links',
        description:
          "The calling key's merchant and environment only, newest first. Page with limit and starting_after (the last id of the previous page) while has_more is true: a page never skips or repeats a link, whatever is created meanwhile.",
        querystring: ListPaymentLinksQuery,
        response: {
          200: described(PaymentLinkList, 'A page of links, newest first.'),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return listPaymentLinks(db, principal.merchantId, principal.environment, request.query, config.checkoutUrlHost);
    },
  );

  idempotentPost<{ Params: { id: string }; Body: UpdatePaymentLinkBody }>(
    app,
    '/api/v1/payment-links/:id',
    {
      operationId: 'updatePaymentLink',
      tags,
      summary: 'Change a payment link',
      description:
        'Changes its name, description, active (false: its page answers 410 and takes no payment) or expires_at (null: no expiry); nothing else changes. Event payment_link.updated.',
      params: PaymentLinkParams,
      body: UpdatePaymentLinkBody,
      response: {
        200: described(PaymentLinkResponse, 'The link as changed.'),
        ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429),
      },
    },
    async (request) => {
      const owner = ownerOf(principalOf(request));
      return transactionWork(200, (tx) =>
        updatePaymentLink(tx, owner, request.params.id, request.body, config.checkoutUrlHost),
      );
    },
  );
}
