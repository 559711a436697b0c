// Webhook signatures (DESIGN §3 Webhooks: Standard Webhooks, `v1,` + base64 HMAC-SHA256 of
// `id.timestamp.body`, 5-minute tolerance) through verifyWebhook, the package's export for merchants.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyWebhook, WebhookVerificationError, type WebhookErrorCode } from '../../src/index.ts';
import { sign, signatureHeader } from '../../src/events/signing.ts';

// The Standard Webhooks reference vector (standard-webhooks libraries' tests).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MSG_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const REFERENCE_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const AT_TIMESTAMP_MS = TIMESTAMP * 1000;
const OTHER_SECRET = 'whsec_' + Buffer.from('another endpoint secret, 32 bytes').toString('base64');

const headersOf = (signature = REFERENCE_SIGNATURE, id = MSG_ID, timestamp = String(TIMESTAMP)) => ({
  'webhook-id': id,
  'webhook-timestamp': timestamp,
  'webhook-signature': signature,
});

function assertRefused(run: () => unknown, code: WebhookErrorCode) {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof WebhookVerificationError, `expected a WebhookVerificationError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.name, 'WebhookVerificationError');
    return true;
  });
}

describe('webhook signing and verifyWebhook', () => {
  it('signing the Standard Webhooks reference message gives the reference signature', () => {
    assert.equal(sign(SECRET, MSG_ID, TIMESTAMP, BODY), REFERENCE_SIGNATURE);
    assert.equal(signatureHeader([SECRET], MSG_ID, TIMESTAMP, BODY), REFERENCE_SIGNATURE);
  });

  it('verifyWebhook from the package entry accepts the reference message and returns the parsed body', () => {
    const event = verifyWebhook<{ test: number }>(BODY, headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS });
    assert.deepEqual(event, { test: 2432232314 });
  });

  it('verifyWebhook accepts the raw body as a Buffer, a Headers object and headers in any letter case', () => {
    assert.deepEqual(verifyWebhook(Buffer.from(BODY, 'utf8'), headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS }), {
      test: 2432232314,
    });
    assert.deepEqual(verifyWebhook(BODY, new Headers(headersOf()), SECRET, { nowMs: AT_TIMESTAMP_MS }), {
      test: 2432232314,
    });
    const upper = {
      'Webhook-Id': MSG_ID,
      'Webhook-Timestamp': String(TIMESTAMP),
      'Webhook-Signature': REFERENCE_SIGNATURE,
    };
    assert.deepEqual(verifyWebhook(BODY, upper, SECRET, { nowMs: AT_TIMESTAMP_MS }), { test: 2432232314 });
  });

  it('a body changed by a single character is refused as INVALID_SIGNATURE', () => {
    assertRefused(
      () => verifyWebhook('{"test": 2432232315}', headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS }),
      'INVALID_SIGNATURE',
    );
    // Re-serialising the JSON (whitespace dropped) is a different raw body too.
    assertRefused(
      () => verifyWebhook(JSON.stringify(JSON.parse(BODY)), headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS }),
      'INVALID_SIGNATURE',
    );
  });

  it('a changed timestamp is refused as INVALID_SIGNATURE even when it is within the tolerance', () => {
    const changed = headersOf(REFERENCE_SIGNATURE, MSG_ID, String(TIMESTAMP + 1));
    assertRefused(() => verifyWebhook(BODY, changed, SECRET, { nowMs: AT_TIMESTAMP_MS }), 'INVALID_SIGNATURE');
  });

  it('a changed webhook-id is refused as INVALID_SIGNATURE', () => {
    assertRefused(
      () => verifyWebhook(BODY, headersOf(REFERENCE_SIGNATURE, 'msg_other'), SECRET, { nowMs: AT_TIMESTAMP_MS }),
      'INVALID_SIGNATURE',
    );
  });

  it('a correctly signed message older or newer than the tolerance (5 minutes by default) is refused as TIMESTAMP_OUT_OF_TOLERANCE', () => {
    // At the edge: exactly 300 s is still accepted, 301 s is not, in both directions.
    assert.deepEqual(verifyWebhook(BODY, headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS + 300_000 }), {
      test: 2432232314,
    });
    assertRefused(
      () => verifyWebhook(BODY, headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS + 301_000 }),
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
    assertRefused(
      () => verifyWebhook(BODY, headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS - 301_000 }),
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
    // Against the real clock the 2021 reference message is long expired.
    assertRefused(() => verifyWebhook(BODY, headersOf(), SECRET), 'TIMESTAMP_OUT_OF_TOLERANCE');
  });

  it('toleranceSeconds narrows or widens the accepted age', () => {
    assertRefused(
      () => verifyWebhook(BODY, headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS + 11_000, toleranceSeconds: 10 }),
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
    assert.deepEqual(
      verifyWebhook(BODY, headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS + 10_000, toleranceSeconds: 10 }),
      { test: 2432232314 },
    );
    assert.deepEqual(
      verifyWebhook(BODY, headersOf(), SECRET, { nowMs: AT_TIMESTAMP_MS + 3_600_000, toleranceSeconds: 3_600 }),
      { test: 2432232314 },
    );
  });

  it('a timestamp that is not whole Unix seconds is refused as INVALID_TIMESTAMP', () => {
    for (const timestamp of ['', 'abc', '1614265330.5', '-1614265330', '1614265330000000']) {
      const headers = headersOf(REFERENCE_SIGNATURE, MSG_ID, timestamp);
      assertRefused(
        () => verifyWebhook(BODY, headers, SECRET, { nowMs: AT_TIMESTAMP_MS }),
        timestamp === '' ? 'MISSING_HEADERS' : 'INVALID_TIMESTAMP',
      );
    }
  });

  it('the signature of another secret is refused as INVALID_SIGNATURE', () => {
    assertRefused(
      () => verifyWebhook(BODY, headersOf(), OTHER_SECRET, { nowMs: AT_TIMESTAMP_MS }),
      'INVALID_SIGNATURE',
    );
    const signedWithOther = sign(OTHER_SECRET, MSG_ID, TIMESTAMP, BODY);
    assert.notEqual(signedWithOther, REFERENCE_SIGNATURE);
    assertRefused(
      () => verifyWebhook(BODY, headersOf(signedWithOther), SECRET, { nowMs: AT_TIMESTAMP_MS }),
      'INVALID_SIGNATURE',
    );
  });

  it('a missing webhook-id, webhook-timestamp or webhook-signature header is refused as MISSING_HEADERS', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const headers: Record<string, string> = headersOf();
      delete headers[name];
      assertRefused(() => verifyWebhook(BODY, headers, SECRET, { nowMs: AT_TIMESTAMP_MS }), 'MISSING_HEADERS');
    }
    assertRefused(() => verifyWebhook(BODY, {}, SECRET, { nowMs: AT_TIMESTAMP_MS }), 'MISSING_HEADERS');
  });

  it('signatures of another version, malformed entries or a truncated digest are refused', () => {
    const digest = REFERENCE_SIGNATURE.slice(3);
    for (const signature of [
      `v2,${digest}`,
      `v1a,${digest}`,
      digest,
      'v1,',
      'v1',
      `v1,${digest.slice(0, -4)}`,
      `v1,${Buffer.alloc(32).toString('base64')}`,
    ]) {
      assertRefused(
        () => verifyWebhook(BODY, headersOf(signature), SECRET, { nowMs: AT_TIMESTAMP_MS }),
        'INVALID_SIGNATURE',
      );
    }
  });

  it('during a secret rotation a header with two space-separated signatures verifies with either secret, and only with those', () => {
    const header = signatureHeader([OTHER_SECRET, SECRET], MSG_ID, TIMESTAMP, BODY);
    const parts = header.split(' ');
    assert.equal(parts.length, 2);
    assert.ok(parts.every((part) => part.startsWith('v1,')));
    assert.equal(parts[1], REFERENCE_SIGNATURE);
    assert.deepEqual(verifyWebhook(BODY, headersOf(header), SECRET, { nowMs: AT_TIMESTAMP_MS }), { test: 2432232314 });
    assert.deepEqual(verifyWebhook(BODY, headersOf(header), OTHER_SECRET, { nowMs: AT_TIMESTAMP_MS }), {
      test: 2432232314,
    });
    // Order does not matter.
    const reversed = signatureHeader([SECRET, OTHER_SECRET], MSG_ID, TIMESTAMP, BODY);
    assert.deepEqual(verifyWebhook(BODY, headersOf(reversed), OTHER_SECRET, { nowMs: AT_TIMESTAMP_MS }), {
      test: 2432232314,
    });
    const third = 'whsec_' + Buffer.from('a third secret nobody was given').toString('base64');
    assertRefused(() => verifyWebhook(BODY, headersOf(header), third, { nowMs: AT_TIMESTAMP_MS }), 'INVALID_SIGNATURE');
    // Both signatures still cover the body.
    assertRefused(
      () => verifyWebhook('{"test": 1}', headersOf(header), OTHER_SECRET, { nowMs: AT_TIMESTAMP_MS }),
      'INVALID_SIGNATURE',
    );
  });

  it('a correctly signed body that is not JSON is refused as INVALID_PAYLOAD', () => {
    const body = 'not json';
    const signature = sign(SECRET, MSG_ID, TIMESTAMP, body);
    assertRefused(
      () => verifyWebhook(body, headersOf(signature), SECRET, { nowMs: AT_TIMESTAMP_MS }),
      'INVALID_PAYLOAD',
    );
  });

  it('a secret with or without the whsec_ prefix signs the same way', () => {
    assert.equal(sign(SECRET.slice('whsec_'.length), MSG_ID, TIMESTAMP, BODY), REFERENCE_SIGNATURE);
    assert.deepEqual(verifyWebhook(BODY, headersOf(), SECRET.slice('whsec_'.length), { nowMs: AT_TIMESTAMP_MS }), {
      test: 2432232314,
    });
  });
});
