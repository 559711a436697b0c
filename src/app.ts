// App assembly: cross-cutting plugins once, then each domain's routes as its own plugin.
import { randomUUID } from 'node:crypto';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  type RouteOptions,
} from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Registry } from 'prom-client';
import { ApiKeyAuthenticator } from './accounts/api-keys.ts';
import { setAccountMailBaseUrl } from './accounts/activation.ts';
import { LiveAccessGate } from './accounts/live-access.ts';
import { accountRoutes } from './http/routes/account/routes.ts';
import { Account } from './http/routes/account/schemas.ts';
import { booksRoutes } from './http/routes/books/routes.ts';
import { exportRoutes } from './http/routes/books/export-routes.ts';
import { checkoutMerchantRoutes } from './http/routes/checkout/merchant-routes.ts';
import { paymentLinkRoutes } from './http/routes/checkout/payment-link-routes.ts';
import { PaymentLinkList, PaymentLinkResponse } from './http/routes/checkout/payment-link-schemas.ts';
import { checkoutPayerRoutes } from './http/routes/checkout/payer-routes.ts';
import { simulateRoutes } from './http/routes/checkout/simulate-routes.ts';
import { refundRoutes } from './http/routes/refunds/routes.ts';
import { setDuplicatePaymentRefund } from './checkout/duplicate-refund.ts';
import { configureClearingDefaults } from './ledger/clearing.ts';
import { refundDuplicatePayment } from './refunds/sika-refunds.ts';
import { eventRoutes } from './http/routes/events/routes.ts';
import { createPayoutsRuntime } from './payouts/runtime.ts';
import { payoutRoutes } from './http/routes/payouts/routes.ts';
import { settlementRoutes } from './http/routes/payouts/settlement-routes.ts';
import { testSettlementRoutes } from './http/routes/payouts/test-settlement-routes.ts';
import { SettlementSchedule } from './http/routes/payouts/settlement-schemas.ts';
import { providerRoutes } from './http/routes/providers/routes.ts';
import { payerPageRoutes } from './web/checkout/routes.ts';
import { paymentLinkPageRoutes } from './web/checkout/link-routes.ts';
import { dashboardRoutes } from './web/dashboard/index.ts';
import { opsRoutes } from './web/ops/routes.ts';
import { signupPages } from './web/signup.ts';
import { docsUiOptions } from './web/docs.ts';
import { consoleErrorPage, consoleOfUrl, sendErrorPage } from './web/error-pages.ts';
import type { PayoutRail } from './rails/payouts.ts';
import { createLiveProviders } from './rails/live-config.ts';
import type { LiveProviders } from './rails/live.ts';
import type { Config } from './config/index.ts';
import type { Db } from './db/index.ts';
import { isMigrated } from './db/migrate.ts';
import { systemResolver, type Resolver } from './lib/ssrf.ts';
import { invoicingRoutes } from './http/routes/invoicing/routes.ts';
import { documentApiKeySecurity, documentLiveGate, requireApiKey, requireLiveAccess } from './http/auth.ts';
import { registerBodyParsers } from './http/body.ts';
import { registerConnectionLimits, serverOptions } from './http/connections.ts';
import type { AppDeps } from './http/deps.ts';
import { errors } from './lib/errors.ts';
import { registerErrorHandler, sendError, toSikaError } from './http/error-handler.ts';
import { registerIdempotentRoutes } from './http/idempotency.ts';
import { type ProblemSender, registerUnroutedHandler } from './http/methods.ts';
import { registerMetrics } from './http/metrics.ts';
import { registerRateLimits } from './http/rate-limit.ts';
import { schemaCompilers } from './http/schema-compilers.ts';
import { ErrorEnvelope, errorResponses, withParserRules } from './http/schemas.ts';
import { finishApiDocument } from './http/openapi.ts';
import { BalanceSummary, BalanceTransactionList, BalanceTransactionSchema } from './http/routes/books/schemas.ts';
import { CheckoutSessionResponse, Payment, SessionList } from './http/routes/checkout/schemas.ts';
import {
  AttemptInitiation,
  AttemptStatusResponse,
  CashSlipResponse,
  CheckoutOptions,
  CheckoutQuote,
  PublicSession,
} from './http/routes/checkout/payer-schemas.ts';
import { EVENT_SCHEMAS } from './events/event-schemas.ts';
import {
  IngestResponse,
  InvoiceLinesResponse,
  RevenueLine,
  RevenueLineList,
  SyncResponse,
} from './http/routes/invoicing/schemas.ts';
import {
  Capabilities,
  Evidence,
  EvidenceUploaded,
  Payout,
  PayoutBalance,
  PayoutList,
  PayoutQuote,
  PayoutRecipient,
  Recipient,
  RecipientList,
} from './http/routes/payouts/schemas.ts';
import { RefundList, RefundResponse } from './http/routes/refunds/schemas.ts';

/**
 * The named schemas of the API (components in /openapi.json), shared by every route: resources, lists and
 * the webhook events (documented only). Registered once at the root, so any route or event may refer to any.
 */
const NAMED_SCHEMAS = [
  ErrorEnvelope,
  Payment,
  CheckoutSessionResponse,
  SessionList,
  PaymentLinkResponse,
  PaymentLinkList,
  CheckoutOptions,
  PublicSession,
  CheckoutQuote,
  AttemptInitiation,
  AttemptStatusResponse,
  CashSlipResponse,
  IngestResponse,
  InvoiceLinesResponse,
  RevenueLine,
  RevenueLineList,
  SyncResponse,
  RefundResponse,
  RefundList,
  Recipient,
  RecipientList,
  PayoutRecipient,
  Evidence,
  EvidenceUploaded,
  Payout,
  PayoutList,
  PayoutQuote,
  PayoutBalance,
  Capabilities,
  SettlementSchedule,
  BalanceTransactionSchema,
  BalanceTransactionList,
  BalanceSummary,
  Account,
  ...EVENT_SCHEMAS,
];

export const API_VERSION = '2026-06';
const REQUEST_ID_PATTERN = /^[\w.:-]{1,64}$/;

type SchemaCompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

export interface RegisteredRoute {
  method: string;
  url: string;
  /** The route's schema as registered (querystring, params, body, ...), so tests can check every route has them. */
  schema: RouteOptions['schema'];
  /** Declares `config: { idempotent: true }` or `'public'` (see registerIdempotentRoutes). */
  idempotent: boolean;
}

/**
 * Every API operation can answer what the framework answers before its handler runs: 400 for bad input
 * (query, path or body), 414 for an over-long path parameter, and for a body 413 (too large) and 415
 * (unsupported type). Listed in the OpenAPI document where a route did not list them itself.
 */
function documentCommonErrors(route: RouteOptions): void {
  const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
  if (!response || !route.url.startsWith('/api/')) return;
  const methods = [route.method].flat();
  const common = [
    400,
    ...(route.url.includes(':') ? [414] : []),
    ...(methods.some((m) => ['POST', 'PUT', 'PATCH'].includes(m)) ? [413, 415] : []),
  ];
  for (const [status, schema] of Object.entries(errorResponses(...common))) response[status] ??= schema;
}

/**
 * TRUST_PROXY for Fastify. A hop count becomes proxy-addr's "trust the first N hops" function: Fastify 5
 * now ignores a bare number (it cannot tell a direct client from the proxy), so a hop count is for a port
 * only the load balancer can reach; a CIDR list is safer and is passed as is.
 */
function trustProxyOption(
  setting: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting;
}

/** Each request's logger at `level`, whatever the app's own (Fastify's default factory, with the level). */
const requestLoggerAt =
  (level: string) =>
  (
    parent: FastifyBaseLogger,
    bindings: Parameters<FastifyBaseLogger['child']>[0],
    options: Parameters<FastifyBaseLogger['child']>[1],
  ) =>
    parent.child(bindings, { ...options, level });

export interface BuildOptions {
  config: Config;
  db: Db;
  logger?: FastifyServerOptions['logger'];
  /** The Live providers; by default those the configuration enables (createLiveProviders). */
  providers?: LiveProviders;
  /** A Live payout provider tried before the configured ones, serving every recipient (tests pass the Live payout simulator). */
  payoutRail?: PayoutRail | null;
  /** The DNS that judges webhook URLs at endpoint creation (tests pass a stub); the system's by default. */
  webhookResolver?: Resolver;
}

/** A refusal as JSON, or on a console path the consoles' HTML error page. */
const sendProblem: ProblemSender = (request, reply, problem) => {
  const consoleKind = consoleOfUrl(request.url);
  return consoleKind
    ? sendErrorPage(request, reply, problem, consoleErrorPage(consoleKind))
    : sendError(reply, problem);
};

export async function buildApp({
  config,
  db,
  logger,
  providers: given,
  payoutRail = null,
  webhookResolver = systemResolver,
}: BuildOptions): Promise<FastifyInstance> {
  // Outcomes applied by this process's routes and workers refund duplicate payments (src/checkout/duplicate-refund.ts).
  setDuplicatePaymentRefund(refundDuplicatePayment);
  // Payments this process credits clear after the deployment's times (CLEARING_DAYS, src/ledger/clearing.ts).
  configureClearingDefaults(config.clearingDays);
  const configured = given ?? createLiveProviders(config);
  const providers = payoutRail ? configured.withPayoutsFirst(payoutRail) : configured;
  const compilers = schemaCompilers();
  const app = Fastify({
    logger: logger ?? { level: config.logLevel, redact: ['req.headers.authorization'] },
    // Request-scoped lines at their own level (quiet on a developer's machine: config.requestLogLevel).
    ...(config.requestLogLevel !== config.logLevel
      ? { childLoggerFactory: requestLoggerAt(config.requestLogLevel) }
      : {}),
    bodyLimit: config.bodyLimitBytes,
    // Off unless TRUST_PROXY names the proxies in front: then request.ip is the client's, for rate limits and logs.
    trustProxy: trustProxyOption(config.trustProxy),
    ...serverOptions(config),
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: true } },
    return503OnClosing: true,
    schemaController: { compilersFactory: compilers.compilersFactory as unknown as SchemaCompilersFactory },
    // Router-level errors (malformed percent-encoding, over-long path parameter) get the envelope too, or on
    // a console path the consoles' HTML error page.
    frameworkErrors: (error, request, reply) => sendProblem(request, reply, toSikaError(error)),
  });
  // Idempotency-Key for the routes that declare it, before any other onRoute hook sees their schema.
  registerIdempotentRoutes(app, db);
  // Every route as registered, so tests can walk all of them (a new route cannot go unchecked).
  const registeredRoutes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', registeredRoutes);
  app.decorate('compileSchemas', compilers.compileAll);
  app.addHook('onRoute', (route) => {
    const idempotent = route.config?.idempotent === true || route.config?.idempotent === 'public';
    for (const method of [route.method].flat())
      registeredRoutes.push({ method, url: route.url, schema: route.schema, idempotent });
    documentCommonErrors(route);
    // The API's request schemas say what body.ts refuses before them: unstorable text, unsafe integers (src/http/schemas.ts).
    if (route.url.startsWith('/api/') && route.schema) {
      for (const part of ['body', 'querystring', 'params'] as const)
        if (route.schema[part]) route.schema[part] = withParserRules(route.schema[part]);
    }
  });
  app.decorateRequest('principal', null);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  registerErrorHandler(app);
  // No route for the request: 405 with Allow when its path takes other methods, 404 otherwise (methods.ts).
  registerUnroutedHandler(app, registeredRoutes, sendProblem);
  registerConnectionLimits(app);
  for (const schema of NAMED_SCHEMAS) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sika API',
        version: '1.0.0',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description: `Payment collection and payouts for Ghana. API version ${API_VERSION}. Amounts are integers in pesewas. Errors use one envelope: {error: {code, message, retry_after_seconds?}}. JSON bodies may also be sent as application/x-www-form-urlencoded or multipart/form-data (nested fields as a[b]); every body in UTF-8 and uncompressed (another charset or a Content-Encoding other than identity is a 415), JSON integers within ±(2^53 - 1) in any notation (a number whose value is an integer beyond, such as 9007199254740993, 9007199254740993.0, 9.007199254740993e15 or 1e300, is a 400, never rounded). A method a path does not take is a 405 with Allow. CSV files: the Exports operations. Webhooks: the \`webhooks\` section, one signed POST per event type.`,
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'ak_test_... or ak_live_...' } },
      },
    },
    // Headers, form bodies, documented-only bodies and the webhooks section (src/http/openapi.ts).
    transformObject: (document) =>
      finishApiDocument('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) || `def-${i}` },
  });
  // The API reference, Swagger UI themed as Sika's with its own content security policy (src/web/docs.ts).
  await app.register(swaggerUi, docsUiOptions);

  await registerBodyParsers(app, config.bodyLimitBytes);
  const metrics = registerMetrics(app, {
    token: config.metricsToken,
    onApiPort: config.metricsOnApiPort,
    port: config.metricsPort,
    host: config.host,
  });
  const limiters = await registerRateLimits(app, {
    redisUrl: config.redisUrl,
    keyPerSecond: config.rateLimitKeyPerSecond,
    ipPerSecond: config.rateLimitIpPerSecond,
    sessionPerSecond: config.rateLimitSessionPerSecond,
  });
  const authenticator = new ApiKeyAuthenticator(db);
  await authenticator.start();
  app.addHook('onClose', async () => authenticator.stop());
  const liveAccess = new LiveAccessGate(db);
  await liveAccess.start();
  app.addHook('onClose', async () => liveAccess.stop());
  // The owner's activation and suspension mails link to this deployment's dashboard (src/accounts/activation.ts).
  setAccountMailBaseUrl(config.baseUrl);
  const deps: AppDeps = {
    db,
    config,
    authenticator,
    liveAccess,
    limiters,
    providers,
    payouts: createPayoutsRuntime(db, metrics),
    webhookResolver,
  };
  app.decorate('deps', deps);
  app.decorate('metrics', metrics);
  app.addHook('onClose', async () => limiters.close());

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async () => {
    try {
      await db.ping();
      if (!(await isMigrated(db))) throw new Error('migrations pending');
      return { status: 'ready', storage: db.kind };
    } catch {
      throw errors.unavailable('Storage is not reachable or not migrated.');
    }
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Merchant API: a Bearer key on every route, then the per-key rate limit.
  await app.register(async (merchantApi) => {
    merchantApi.addHook('onRequest', requireApiKey(deps.authenticator));
    merchantApi.addHook('onRoute', documentApiKeySecurity);
    // Live keys only for an approved merchant not suspended (issue 33); Test keys always.
    merchantApi.addHook('onRequest', requireLiveAccess(deps.liveAccess));
    merchantApi.addHook('onRoute', documentLiveGate);
    merchantApi.addHook('onRequest', deps.limiters.perKey);
    await merchantApi.register(checkoutMerchantRoutes, deps);
    await merchantApi.register(paymentLinkRoutes, deps);
    await merchantApi.register(invoicingRoutes, deps);
    await merchantApi.register(simulateRoutes, deps);
    await merchantApi.register(refundRoutes, deps);
    await merchantApi.register(eventRoutes, deps);
    await merchantApi.register(payoutRoutes, deps);
    await merchantApi.register(settlementRoutes, deps);
    await merchantApi.register(testSettlementRoutes, deps);
    await merchantApi.register(booksRoutes, deps);
    await merchantApi.register(exportRoutes, deps);
    await merchantApi.register(accountRoutes, deps);
  });
  // Hosted checkout API: public, limited per client address and per session.
  await app.register(checkoutPayerRoutes, deps);
  await app.register(providerRoutes, deps);
  await app.register(payerPageRoutes, deps);
  // A payment link's page, form, QR code and poster (issue 35): public, like the payer page.
  await app.register(paymentLinkPageRoutes, deps);
  // The consoles, the only routes with cookies: the cookie plugin's hooks run for them alone.
  await app.register(async (consoles) => {
    await consoles.register(cookie);
    // Merchant dashboard (cookie sessions, CSRF on every form).
    await consoles.register(dashboardRoutes, deps);
    // Operator console (its own accounts and cookie).
    await consoles.register(opsRoutes, deps);
    // Self-service sign-up: no session yet; it ends signed in to the dashboard.
    await consoles.register(signupPages, deps);
  });

  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    /** The Prometheus registry behind /metrics, for what starts beside the app (the workers' storage availability). */
    metrics: Registry;
    registeredRoutes: readonly RegisteredRoute[];
    /** Compiles every route schema now (they compile on first use otherwise; see schema-compilers.ts). */
    compileSchemas(): void;
  }
}
