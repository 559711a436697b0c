import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

describe(`smoke (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('a merchant creates a session with its Test key and reads it back', async () => {
    const m = await t.merchant();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: bearer(m.test_api_key),
      payload: { amount_minor: 50000, invoice_ref: 'INV-1' },
    });
    assert.equal(created.statusCode, 201);
    const session = created.json();
    assert.equal(session.status, 'open');
    assert.equal(session.checkout_url, `http://sika.test/pay/${session.id}`);
    const read = await t.app.inject({
      method: 'GET',
      url: `/api/v1/sessions/${session.id}`,
      headers: bearer(m.test_api_key),
    });
    assert.deepEqual(read.json(), session);
  });
});
