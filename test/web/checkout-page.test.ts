// The hosted payment page's server side (GET /pay/{id}, /pay/{id}/slip, POST /pay/{id}/test-outcome,
// its script) through inject: friendly 404s, compression, security headers, escaping, every session
// state's screen, and the Test buttons' endpoint (Test sessions only, only this session's attempts).
import assert from 'node:assert/strict';
import { Agent, get } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call } from '../support/http.ts';
import { createSession, momoBody, startAttempt, TELECEL_PHONE } from '../support/checkout.ts';

describe(`hosted payment page, server side (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const page = (path: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: path, headers });
  const testOutcome = (sessionId: string, body: Record<string, string>, format: 'json' | 'form' = 'json') =>
    t.app.inject({
      method: 'POST',
      url: `/pay/${sessionId}/test-outcome`,
      headers: { 'content-type': format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded' },
      payload: format === 'json' ? JSON.stringify(body) : new URLSearchParams(body).toString(),
    });
  const screenOf = (body: string) => /<div id="view" data-screen="(\w+)"/.exec(body)?.[1];

  it('an unknown or malformed session id is a 404 HTML page, not JSON', async () => {
    for (const id of ['cs_unknown', 'not a session', 'x'.repeat(90), '../etc']) {
      const res = await page(`/pay/${encodeURIComponent(id)}`);
      assert.equal(res.statusCode, 404, id);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /We could not find this payment/);
    }
    assert.equal((await page('/pay/cs_unknown/slip')).statusCode, 404);
  });

  it('is compressed with br or gzip as the client asks, with a strict CSP, and its script is cached immutably', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m);
    const plain = await page(`/pay/${session.id}`);
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers['cache-control'], 'no-store');
    assert.equal(plain.headers.vary, 'accept-encoding');
    const csp = String(plain.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    const br = await page(`/pay/${session.id}`, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.rawPayload).toString('utf8'), plain.body);
    const gzip = await page(`/pay/${session.id}`, { 'accept-encoding': 'gzip, br;q=0' });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gzip.rawPayload).toString('utf8'), plain.body);
    assert.ok(br.rawPayload.length < 10_000, `${br.rawPayload.length} bytes`);

    const scriptUrl = /<script src="([^"]+)"/.exec(plain.body)![1]!;
    const script = await page(scriptUrl, { 'accept-encoding': 'br' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    assert.match(String(script.headers['cache-control']), /immutable/);
    assert.equal(script.headers['content-encoding'], 'br');
    assert.ok(script.rawPayload.length < 8_000);
  });

  /** The first load's budget on the wire (issue 31): the page and its script, headers and compressed bodies. */
  const FIRST_LOAD_BYTES_MAX = 30 * 1024;
  /** One GET over real loopback HTTP on a fresh keep-alive connection: every byte the response took on the wire (status line, headers, body as framed). */
  async function onTheWire(url: string, acceptEncoding: string) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      return await new Promise<{
        status: number;
        encoding: string | null;
        wireBytes: number;
        bodyBytes: number;
        body: Buffer;
      }>((resolve, reject) => {
        const req = get(
          url,
          {
            agent,
            headers: { 'accept-encoding': acceptEncoding, accept: 'text/html,*/*', 'user-agent': 'Mozilla/5.0' },
          },
          (res) => {
            const socket = res.socket; // handed back to the agent (and unset on res) when the response ends
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              const body = Buffer.concat(chunks);
              resolve({
                status: res.statusCode ?? 0,
                encoding: (res.headers['content-encoding'] as string | undefined) ?? null,
                wireBytes: socket.bytesRead,
                bodyBytes: body.length,
                body,
              });
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
      });
    } finally {
      agent.destroy();
    }
  }

  it(`a first load of /pay/{id} (the page and its script as served: compressed, with headers) is at most ${FIRST_LOAD_BYTES_MAX} bytes`, async () => {
    const base = await t.listen();
    const m = await t.merchant();
    const session = await createSession(t, m, { description: 'Order 1042: two bags of rice, one tin of oil' });
    const figures: string[] = [];
    // What Chromium asks for (br), and a browser without br (gzip).
    for (const acceptEncoding of ['gzip, deflate, br, zstd', 'gzip, deflate']) {
      const pageLoad = await onTheWire(`${base}/pay/${session.id}`, acceptEncoding);
      assert.equal(pageLoad.status, 200);
      assert.equal(pageLoad.encoding, acceptEncoding.includes('br') ? 'br' : 'gzip');
      const html = (
        pageLoad.encoding === 'br' ? brotliDecompressSync(pageLoad.body) : gunzipSync(pageLoad.body)
      ).toString('utf8');
      // The page loads its script and nothing else over the network (the icon is an inline data: URL): no
      // stylesheet, image, font or second script to add.
      const loads = [...html.matchAll(/<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)="([^"]+)"/g)]
        .map((l) => l[1]!)
        .filter((url) => !url.startsWith('data:'));
      assert.equal(loads.length, 1, `the page and its script, nothing else: ${loads}`);
      assert.doesNotMatch(html, /url\(/, 'no stylesheet fetches');
      const scriptLoad = await onTheWire(new URL(loads[0]!, base).href, acceptEncoding);
      assert.equal(scriptLoad.status, 200);
      assert.equal(scriptLoad.encoding, pageLoad.encoding);
      const total = pageLoad.wireBytes + scriptLoad.wireBytes;
      figures.push(
        `${pageLoad.encoding}: ${total} B (page ${pageLoad.wireBytes} B, of them body ${pageLoad.bodyBytes}; script ${scriptLoad.wireBytes} B, of them body ${scriptLoad.bodyBytes})`,
      );
      assert.ok(total <= FIRST_LOAD_BYTES_MAX, `first load ${figures.at(-1)}`);
    }
    console.log(`first load of /pay/{id}, on the wire: ${figures.join('; ')}`);
  });

  it('shows the merchant, amount, description and rails, and escapes what the merchant wrote', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, {
      amount_minor: 123_456_78,
      description: '<script>alert(1)</script> & "fees"',
    });
    const res = await page(`/pay/${session.id}`);
    assert.match(res.body, /<html lang="en">/);
    assert.match(res.body, /GHS 123,456\.78/);
    assert.match(res.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;fees&quot;/);
    assert.doesNotMatch(res.body, /<script>alert/);
    assert.match(res.body, /Test mode — no real money moves/);
    for (const rail of ['momo', 'card', 'bank_transfer', 'cash'])
      assert.match(res.body, new RegExp(`name="rail" value="${rail}"`));
    assert.ok(
      res.body.includes('data-total="12530863"'),
      'momo total: the base plus 1.5%, half up (185,185.17 -> 185,185 pesewas)',
    );
    assert.equal(screenOf(res.body), 'choose');
  });

  it('a Live session shows no Test banner and offers only cash', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, {}, { live: true });
    const res = await page(`/pay/${session.id}`);
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /Test mode/);
    assert.deepEqual(
      [...res.body.matchAll(/name="rail" value="(\w+)"/g)].map((x) => x[1]),
      ['cash'],
    );
  });

  it('renders the screen of each state: code, waiting, review, success (with the return link), open after a failure, failed', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { callback_url: 'https://shop.example.com/back?order=7' });
    const attempt = await startAttempt(t, session.id, momoBody(50000, TELECEL_PHONE, 'telecel'));
    let res = await page(`/pay/${session.id}`);
    assert.equal(screenOf(res.body), 'code');
    assert.match(res.body, new RegExp(`data-attempt="${attempt.attempt_reference}"`));
    const authorized = await call(
      t,
      'POST',
      `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attempt.attempt_reference}/authorize`,
      { body: { code: '123456' } },
    );
    assert.equal(authorized.statusCode, 200, authorized.body);
    assert.equal(screenOf((await page(`/pay/${session.id}`)).body), 'waiting');

    assert.equal(
      (await testOutcome(session.id, { attempt_reference: attempt.attempt_reference, outcome: 'manual_review' }))
        .statusCode,
      200,
    );
    res = await page(`/pay/${session.id}`);
    assert.equal(screenOf(res.body), 'review');
    assert.deepEqual(
      [...res.body.matchAll(/name="outcome" value="(\w+)"/g)].map((x) => x[1]),
      ['paid', 'failed'],
    );

    assert.equal(
      (await testOutcome(session.id, { attempt_reference: attempt.attempt_reference, outcome: 'paid' })).statusCode,
      200,
    );
    res = await page(`/pay/${session.id}`);
    assert.equal(screenOf(res.body), 'success');
    assert.match(
      res.body,
      new RegExp(`href="https://shop.example.com/back\\?order=7&amp;session_id=${session.id}&amp;status=success"`),
    );
    assert.doesNotMatch(res.body, /name="outcome"/);

    // Five failed attempts end the session: the failed screen, no form.
    const other = await createSession(t, m);
    for (let i = 0; i < 5; i++) {
      const a = await startAttempt(t, other.id, { rail: 'card', amount_minor: 50000 });
      assert.equal(
        (await testOutcome(other.id, { attempt_reference: a.attempt_reference, outcome: 'failed' })).statusCode,
        200,
      );
      if (i === 0) {
        const open = await page(`/pay/${other.id}`);
        assert.equal(screenOf(open.body), 'choose');
        assert.match(open.body, /Payment not completed/);
      }
    }
    res = await page(`/pay/${other.id}`);
    assert.equal(screenOf(res.body), 'failed');
    assert.doesNotMatch(res.body, /id="pay-form"/);
  });

  it('the slip page shows the active slip with its QR code, and sends the payer back to the page when there is none', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m);
    const none = await page(`/pay/${session.id}/slip`);
    assert.equal(none.statusCode, 303);
    assert.equal(none.headers.location, `/pay/${session.id}`);
    const slip = await call(t, 'POST', '/api/v1/checkout/cash-slips', {
      body: { session_id: session.id, amount_minor: 50200 },
    });
    assert.equal(slip.statusCode, 201, slip.body);
    const res = await page(`/pay/${session.id}/slip`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, new RegExp(slip.json().reference));
    assert.match(res.body, /<svg class="qr"[^>]+aria-label="QR code of the slip reference SK-/);
    assert.match(res.body, /GCB Bank<\/strong>: Accra Central/);
    assert.match(res.body, /@media print/);
  });

  it('test-outcome: JSON answers the attempt status, a form redirects back to the page, both through the simulate path', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m);
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: 50000 });
    const form = await testOutcome(
      session.id,
      { attempt_reference: attempt.attempt_reference, outcome: 'pending' },
      'form',
    );
    assert.equal(form.statusCode, 303);
    assert.equal(form.headers.location, `/pay/${session.id}`);
    const json = await testOutcome(session.id, { attempt_reference: attempt.attempt_reference, outcome: 'failed' });
    assert.equal(json.statusCode, 200, json.body);
    assert.equal(json.json().status, 'failed');
    assert.equal(json.json().session_status, 'open');
    const row = (
      await t.db.query<{ raw_status: string }>('SELECT raw_status FROM payment_attempts WHERE id = $1', [
        attempt.attempt_reference,
      ])
    )[0]!;
    assert.equal(row.raw_status, 'FAILED:simulated');
    // A final attempt cannot be moved again: the API's 409, in its envelope.
    assertErrorEnvelope(
      await testOutcome(session.id, { attempt_reference: attempt.attempt_reference, outcome: 'paid' }),
      409,
      'ATTEMPT_FINAL',
    );
    assertErrorEnvelope(
      await testOutcome(session.id, { attempt_reference: attempt.attempt_reference, outcome: 'bogus' }),
      400,
      'INVALID_ARGUMENT',
    );
  });

  it("test-outcome refuses Live sessions (403), another session's attempt (404) and unknown sessions (404)", async () => {
    const m = await t.merchant();
    const live = await createSession(t, m, {}, { live: true });
    const slip = await call(t, 'POST', '/api/v1/checkout/cash-slips', {
      body: { session_id: live.id, amount_minor: 50200 },
    });
    assert.equal(slip.statusCode, 201, slip.body);
    const liveAttempt = (
      await t.db.query<{ id: string }>('SELECT id FROM payment_attempts WHERE session_id = $1', [live.id])
    )[0]!.id;
    assertErrorEnvelope(
      await testOutcome(live.id, { attempt_reference: liveAttempt, outcome: 'paid' }),
      403,
      'FORBIDDEN',
    );
    assert.equal(
      (await t.db.query<{ status: string }>('SELECT status FROM payment_attempts WHERE id = $1', [liveAttempt]))[0]!
        .status,
      'pending',
    );

    const mine = await createSession(t, m);
    const theirs = await createSession(t, await t.merchant());
    const theirAttempt = await startAttempt(t, theirs.id, { rail: 'card', amount_minor: 50000 });
    assertErrorEnvelope(
      await testOutcome(mine.id, { attempt_reference: theirAttempt.attempt_reference, outcome: 'paid' }),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await testOutcome('cs_unknown', { attempt_reference: theirAttempt.attempt_reference, outcome: 'paid' }),
      404,
      'NOT_FOUND',
    );
    assert.equal(
      (
        await t.db.query<{ status: string }>('SELECT status FROM payment_attempts WHERE id = $1', [
          theirAttempt.attempt_reference,
        ])
      )[0]!.status,
      'pending',
    );
    // A form post that fails is a page, not JSON.
    const formLive = await testOutcome(live.id, { attempt_reference: liveAttempt, outcome: 'paid' }, 'form');
    assert.equal(formLive.statusCode, 403);
    assert.match(String(formLive.headers['content-type']), /^text\/html/);
  });

  it('every waiting screen offers "Use another number or method"; without the script its form cancels the attempt (changed_course) and lands on the choice', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m);
    const change = (sessionId: string, attempt: string) =>
      t.app.inject({
        method: 'POST',
        url: `/pay/${sessionId}/change`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ attempt_reference: attempt }).toString(),
      });
    for (const body of [
      momoBody(50000),
      momoBody(50000, TELECEL_PHONE, 'telecel'),
      { rail: 'card', amount_minor: 50000 },
      { rail: 'bank_transfer', amount_minor: 50000 },
    ]) {
      const attempt = await startAttempt(t, session.id, body);
      const res = await page(`/pay/${session.id}`);
      assert.match(
        res.body,
        new RegExp(
          `<form method="post" action="/pay/${session.id}/change" class="actions" data-change>\\n<input type="hidden" name="attempt_reference" value="${attempt.attempt_reference}">`,
        ),
        String(body.rail),
      );
      assert.match(res.body, />Use another number or method</);
      const changed = await change(session.id, attempt.attempt_reference);
      assert.equal(changed.statusCode, 303, changed.body);
      assert.equal(changed.headers.location, `/pay/${session.id}`);
      const row = (
        await t.db.query<{ status: string; failure_reason: string }>(
          'SELECT status, failure_reason FROM payment_attempts WHERE id = $1',
          [attempt.attempt_reference],
        )
      )[0]!;
      assert.deepEqual([row.status, row.failure_reason], ['cancelled', 'changed_course']);
      const after = await page(`/pay/${session.id}`);
      assert.equal(screenOf(after.body), 'choose');
      assert.match(after.body, /Choose another number or method/);
      assert.match(after.body, /You stopped the payment by/);
    }
    // Another session's attempt, or not an attempt id: the 404 page, nothing cancelled.
    const other = await createSession(t, m);
    const theirs = await startAttempt(t, other.id, { rail: 'card', amount_minor: 50000 });
    const refused = await change(session.id, theirs.attempt_reference);
    assert.equal(refused.statusCode, 404);
    assert.match(String(refused.headers['content-type']), /^text\/html/);
    assert.equal((await change(session.id, 'att_<script>')).statusCode, 404);
    assert.equal(
      (
        await t.db.query<{ status: string }>('SELECT status FROM payment_attempts WHERE id = $1', [
          theirs.attempt_reference,
        ])
      )[0]!.status,
      'pending',
    );
  });

  it("honest waiting, as rendered: resend only where supported, the countdown and the way to approve from created_at, a decline's reason, the provider's reference and card on success", async () => {
    const m = await t.merchant();
    const session = await createSession(t, m);
    const attempt = await startAttempt(t, session.id, momoBody(50000));
    const set = (sql: string, params: unknown[] = []) =>
      t.db.query(`UPDATE payment_attempts SET ${sql} WHERE id = $1`, [attempt.attempt_reference, ...params]);
    let body = (await page(`/pay/${session.id}`)).body;
    assert.match(body, /data-action="resend">Resend prompt</, 'the Test simulator can prompt again');
    assert.match(body, /You can resend it 3 more times\./);
    assert.doesNotMatch(body, /data-countdown/, 'no countdown where the provider gives no window');
    assert.match(
      body,
      /<p class="prompt" data-help data-after="30" hidden>No prompt on your phone\? Dial \*170#/,
      "MTN's way to approve, hidden for the first 30 s",
    );

    // A provider that cannot prompt again (as MTN and Paystack), with MTN's window and help, 10 s in.
    const help = 'Dial *170#, choose My Wallet, then My Approvals, and approve the payment.';
    await set("instructions = instructions || $2::jsonb, created_at = now() - interval '10 seconds'", [
      JSON.stringify({ resend_supported: false, approve_within_s: 300, approval_help: help }),
    ]);
    body = (await page(`/pay/${session.id}`)).body;
    assert.doesNotMatch(body, /resend/i);
    assert.match(body, /Approve within <b class="num" data-clock>4:(50|49)<\/b>/);
    assert.match(
      body,
      new RegExp(
        `<p class="prompt" data-help data-after="30" hidden>No prompt on your phone\\? ${help.replace(/[*]/g, '\\*')}</p>`,
      ),
    );
    assert.match(body, /data-elapsed="1[01]"/);
    await set("created_at = now() - interval '40 seconds'");
    body = (await page(`/pay/${session.id}`)).body;
    assert.match(body, /<p class="prompt" data-help data-after="30">No prompt on your phone\?/);
    await set("created_at = now() - interval '400 seconds'");
    body = (await page(`/pay/${session.id}`)).body;
    assert.match(body, /data-countdown data-within="300" data-over>/);
    assert.match(body, /<span data-ended>The time to approve has run out\./);

    // Declined with a reason: the plain sentence on the choice.
    assert.equal(
      (await testOutcome(session.id, { attempt_reference: attempt.attempt_reference, outcome: 'failed' })).statusCode,
      200,
    );
    await set("failure_reason = 'wrong_pin'");
    body = (await page(`/pay/${session.id}`)).body;
    assert.match(
      body,
      /<strong data-reason>The PIN entered was wrong\. Try again and enter your PIN carefully\.<\/strong>/,
    );
    assert.match(body, /data-announce="Payment not completed\. The PIN entered was wrong\./);

    // Paid by card: the provider's transaction id and the card, never the att_ id.
    const card = await startAttempt(t, session.id, { rail: 'card', amount_minor: 50000 });
    await t.db.query(
      "UPDATE payment_attempts SET provider_transaction_id = '4099260516', card_brand = 'VISA', card_last4 = '4081' WHERE id = $1",
      [card.attempt_reference],
    );
    assert.equal(
      (await testOutcome(session.id, { attempt_reference: card.attempt_reference, outcome: 'paid' })).statusCode,
      200,
    );
    body = (await page(`/pay/${session.id}`)).body;
    assert.match(body, /<dt>Paid with<\/dt><dd>Visa •••• 4081<\/dd>/);
    assert.match(body, /<dt>Payment reference<\/dt><dd class="ref">4099260516<\/dd>/);
    assert.doesNotMatch(body, new RegExp(card.attempt_reference));
  });

  it('an expired session shows the expiry screen with no form', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { expires_in_seconds: 60 });
    await t.db.query("update checkout_sessions set expires_at = now() - interval '1 minute' where id=$1", [session.id]);
    const res = await page(`/pay/${session.id}`);
    assert.equal(screenOf(res.body), 'expired');
    assert.match(res.body, /This checkout has expired/);
    assert.doesNotMatch(res.body, /<form/);
  });
});
