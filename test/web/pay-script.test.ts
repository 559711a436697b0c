// The payer page's script (src/web/checkout/pay.js): `npm run typecheck` checks it (tsconfig.pay.json, strict,
// browser globals only), and the server sends it without its comments and indentation: the served text must
// parse to the same program as the file, and be what GET /pay/assets/pay.<hash>.js answers.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Script } from 'node:vm';
import ts from 'typescript';
import { servedScript } from '../../src/web/checkout/routes.ts';
import { createSession } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const source = readFileSync(new URL('../../src/web/checkout/pay.js', import.meta.url), 'utf8');
/** The program without comments or layout, as TypeScript's printer writes it. */
const program = (code: string) =>
  ts
    .createPrinter({ removeComments: true })
    .printFile(ts.createSourceFile('pay.js', code, ts.ScriptTarget.ES2017, false, ts.ScriptKind.JS));

describe('pay.js: type-checked, served without comments', () => {
  it('is part of npm run typecheck, strict, with browser types only', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.match(pkg.scripts.typecheck ?? '', /tsc --noEmit -p tsconfig\.pay\.json/);
    const config = JSON.parse(readFileSync(new URL('../../tsconfig.pay.json', import.meta.url), 'utf8')) as {
      compilerOptions: Record<string, unknown>;
      files: string[];
    };
    assert.deepEqual(config.files, ['src/web/checkout/pay.js']);
    assert.equal(config.compilerOptions.checkJs, true);
    assert.equal(config.compilerOptions.strict, true);
    assert.deepEqual(
      config.compilerOptions.types,
      [],
      'no Node types: setTimeout returns a number, process is unknown',
    );
    assert.match(source, /^\/\/ @ts-check\b/);
  });

  it('the served text is the same program, smaller, and parses as a classic script', () => {
    const served = servedScript(source);
    assert.equal(program(served), program(source));
    assert.doesNotThrow(() => new Script(served, { filename: 'pay.js' }));
    assert.doesNotMatch(served, /@type|@param|@typedef|^\s*\/\//m);
    assert.ok(served.length < source.length * 0.8, `${served.length} of ${source.length} bytes`);
  });
});

describe(`pay.js as the server sends it (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('GET of the page script answers the stripped text', async () => {
    const session = await createSession(t, await t.merchant());
    const page = await t.app.inject({ method: 'GET', url: `/pay/${session.id}` });
    const scriptUrl = /<script src="([^"]+)"/.exec(page.body)![1]!;
    const script = await t.app.inject({ method: 'GET', url: scriptUrl });
    assert.equal(script.statusCode, 200);
    assert.equal(script.body, servedScript(source));
  });
});
