// Route schemas compile on first use, not at start (src/http/schema-compilers.ts, issue 18): a schema
// that cannot compile would otherwise surface only at its first request. Here every route of the real
// app is compiled, and the lazy validators and serialisers are checked to behave as compiled ones do.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { schemaCompilers } from '../../src/http/schema-compilers.ts';
import { startTestApp, type TestContext } from '../support/helpers.ts';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

function smallApp() {
  const compilers = schemaCompilers();
  const app = Fastify({
    logger: false,
    schemaController: { compilersFactory: compilers.compilersFactory as unknown as CompilersFactory },
  });
  return { app, compilers };
}

describe('route schemas', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => {
    await ctx.close();
  });

  it('every route schema of the app compiles', () => {
    assert.ok(ctx.app.registeredRoutes.length > 100);
    ctx.app.compileSchemas();
  });

  it('a schema that cannot compile lets the app start and fails compileSchemas and its first request', async () => {
    const { app, compilers } = smallApp();
    app.post('/broken', { schema: { body: { $ref: 'Nowhere#' } } }, async () => ({ ok: true }));
    await app.ready();
    assert.throws(() => compilers.compileAll(), /Nowhere/);
    const response = await app.inject({ method: 'POST', url: '/broken', payload: {} });
    assert.equal(response.statusCode, 500);
    await app.close();
  });

  it('a lazily compiled validator coerces query text, drops unknown body fields, fills defaults and reports errors', async () => {
    const { app } = smallApp();
    app.post(
      '/echo',
      {
        schema: {
          querystring: { type: 'object', properties: { n: { type: 'integer' } } },
          body: {
            type: 'object',
            required: ['name'],
            additionalProperties: false,
            properties: { name: { type: 'string' }, kind: { type: 'string', default: 'plain' } },
          },
          response: {
            200: {
              type: 'object',
              properties: { n: { type: 'integer' }, body: { type: 'object', additionalProperties: true } },
            },
          },
        },
      },
      async (request) => ({ n: (request.query as { n: number }).n, body: request.body, secret: 'not serialised' }),
    );
    await app.ready();
    const ok = await app.inject({ method: 'POST', url: '/echo?n=7', payload: { name: 'a', extra: 1 } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { n: 7, body: { name: 'a', kind: 'plain' } });
    const bad = await app.inject({ method: 'POST', url: '/echo?n=x', payload: { name: 'a' } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /querystring\/n must be integer/);
    const missing = await app.inject({ method: 'POST', url: '/echo', payload: {} });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.json().message, /must have required property 'name'/);
    await app.close();
  });
});
