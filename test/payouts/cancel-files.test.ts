// Payout cancellation, receipts and evidence files (SPEC 2.13, 3.3, 4.3; DESIGN §3 Payouts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import PDFDocument from 'pdfkit';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { storageKind } from '../support/helpers.ts';
import { assertErrorEnvelope, multipartFile } from '../support/http.ts';
import { pdfText } from '../support/pdf-text.ts';
import {
  api,
  balanceOf,
  bankRecipient,
  createPayout,
  drive,
  eventsFor,
  fund,
  getPayout,
  liveMerchant,
  makeDue,
  merchantWithHooks,
  momoRecipient,
  payoutStatus,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);
const JPEG_1X1 = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);
const EVIDENCE_BYTES_MAX = 5 * 1024 * 1024;

function tinyPdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A6' });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.text('Proof of payment');
  doc.end();
  return done;
}

describe(`payout cancel, receipts and evidence (${storageKind})`, () => {
  const { t, rail } = usePayoutApp();

  const cancel = (key: string, id: string, body?: Record<string, unknown>) =>
    api(t, key, 'POST', `/api/v1/payouts/${id}/cancel`, body);

  function upload(
    key: string,
    payoutId: string,
    file: { field?: string; filename: string; contentType: string; data: Buffer },
  ) {
    const body = multipartFile(file.field ?? 'file', file.filename, file.contentType, file.data);
    return t.app.inject({
      method: 'POST',
      url: `/api/v1/payouts/${payoutId}/evidence`,
      headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType },
      payload: body.payload,
    });
  }

  /** A paid Test payout of a fresh merchant, to a bank account ending 7890. */
  async function paidTestPayout() {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 50_000);
    const recipient = await bankRecipient(t, m.test_api_key, '1234567890');
    const payout = await createPayout(t, m.test_api_key, recipient.id, 12_345);
    assert.equal(payout.status, 'paid');
    return { m, recipient, payout };
  }

  // ---------- cancel ----------

  it('cancelling a requested payout answers 200 cancelled, releases amount and fee and queues payout.cancelled; a repeat returns the same record', async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '4545454545');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 40_000);
    assert.equal(payout.status, 'requested');
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).held_minor, 40_100);

    const res = await cancel(m.live_api_key, payout.id, { reason: 'duplicate invoice' });
    assert.equal(res.statusCode, 200, res.body);
    const cancelled = res.json();
    assert.equal(cancelled.id, payout.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.status_label, 'Cancelled: amount and fee released');
    assert.equal(cancelled.can_cancel, false);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 100_000,
      held_minor: 0,
      eligible_minor: 100_000,
      pending_minor: 0,
      reserved_minor: 0,
    });
    const events = await eventsFor(t, payout.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['payout.requested', 'payout.cancelled'],
    );
    assert.equal((events[1]!.payload.data.payout as { status: string }).status, 'cancelled');
    const stored = await t.db.query<{ cancel_reason: string }>('SELECT cancel_reason FROM payouts WHERE id = $1', [
      payout.id,
    ]);
    assert.equal(stored[0]!.cancel_reason, 'duplicate invoice');

    const again = await cancel(m.live_api_key, payout.id);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json(), cancelled);
    assert.equal((await eventsFor(t, payout.id)).length, 2, 'no second event');
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).available_minor, 100_000, 'released once');
  });

  it('a processing payout can be cancelled before its recipient check runs, and the provider is never called', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await momoRecipient(t, m.live_api_key, '0241234567');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 10_000);
    assert.equal(payout.status, 'processing');
    assert.equal(payout.can_cancel, true);
    const res = await cancel(m.live_api_key, payout.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'cancelled');
    await makeDue(t, payout.id);
    await processDuePayouts(t.db, rail, { only: [payout.id] });
    assert.equal((await payoutStatus(t, payout.id)).status, 'cancelled');
    assert.equal(rail.transferCallsFor(payout.id), 0, 'the provider was never asked to transfer this payout');
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).available_minor, 100_000);
    assert.deepEqual(
      (await eventsFor(t, payout.id)).map((event) => event.type),
      ['payout.processing', 'payout.cancelled'],
    );
  });

  it('a paid Test payout cannot be cancelled (409) and nothing changes', async () => {
    const { m, payout } = await paidTestPayout();
    const before = await balanceOf(t, m.merchant_id, 'test');
    assertErrorEnvelope(await cancel(m.test_api_key, payout.id), 409, 'PAYOUT_NOT_CANCELLABLE');
    assert.equal((await getPayout(t, m.test_api_key, payout.id)).status, 'paid');
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), before);
    assert.deepEqual(
      (await eventsFor(t, payout.id)).map((event) => event.type),
      ['payout.paid'],
    );
  });

  it('a Live payout whose transfer step has started cannot be cancelled (409), and goes on to be paid', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '6767676767');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 10_000);
    await makeDue(t, payout.id);
    await processDuePayouts(t.db, rail, { only: [payout.id] });
    assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'transfer' });
    const read = await getPayout(t, m.live_api_key, payout.id);
    assert.equal(read.can_cancel, false);
    assertErrorEnvelope(await cancel(m.live_api_key, payout.id), 409, 'PAYOUT_NOT_CANCELLABLE');
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).held_minor, 10_100, 'still held');
    assert.equal(await drive(t, rail, payout.id), 'paid');
    assertErrorEnvelope(await cancel(m.live_api_key, payout.id), 409, 'PAYOUT_NOT_CANCELLABLE');

    const failing = await createPayout(
      t,
      m.live_api_key,
      (await bankRecipient(t, m.live_api_key, '6767676713')).id,
      1_000,
    );
    assert.equal(await drive(t, rail, failing.id), 'failed');
    assertErrorEnvelope(await cancel(m.live_api_key, failing.id), 409, 'PAYOUT_NOT_CANCELLABLE');
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 100_000 - 10_100,
      held_minor: 0,
      eligible_minor: 100_000 - 10_100,
      pending_minor: 0,
      reserved_minor: 0,
    });
  });

  it('a cancel reason longer than 500 characters or not a string is refused (400) and the payout stays open', async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 10_000 });
    const recipient = await bankRecipient(t, m.live_api_key);
    const payout = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    assertErrorEnvelope(await cancel(m.live_api_key, payout.id, { reason: 'r'.repeat(501) }), 400, 'INVALID_ARGUMENT');
    assertErrorEnvelope(await cancel(m.live_api_key, payout.id, { reason: 42 }), 400, 'INVALID_ARGUMENT');
    assert.equal((await payoutStatus(t, payout.id)).status, 'requested');
    assert.equal((await cancel(m.live_api_key, payout.id, { reason: 'r'.repeat(500) })).statusCode, 200);
  });

  // ---------- receipts ----------

  it('a receipt is 409 before the payout is paid', async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 10_000 });
    const recipient = await bankRecipient(t, m.live_api_key);
    const requested = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    assertErrorEnvelope(
      await api(t, m.live_api_key, 'GET', `/api/v1/payouts/${requested.id}/receipt`),
      409,
      'RECEIPT_NOT_AVAILABLE',
    );
    await cancel(m.live_api_key, requested.id);
    assertErrorEnvelope(
      await api(t, m.live_api_key, 'GET', `/api/v1/payouts/${requested.id}/receipt`),
      409,
      'RECEIPT_NOT_AVAILABLE',
    );
  });

  it('the receipt of a paid payout is a PDF naming the payout reference and only the last 4 digits of the account', async () => {
    const { m, payout } = await paidTestPayout();
    const res = await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/receipt`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/pdf/);
    assert.match(String(res.headers['content-disposition']), new RegExp(payout.reference));
    const pdf = res.rawPayload;
    assert.equal(pdf.subarray(0, 4).toString('latin1'), '%PDF');
    const text = await pdfText(pdf);
    assert.ok(text.includes(payout.reference), `the receipt names ${payout.reference}:\n${text}`);
    assert.ok(text.includes('******7890'), `the receipt shows the masked account:\n${text}`);
    assert.ok(!text.includes('1234567890'), 'the full account number is not printed');
    assert.ok(text.includes('GHS 123.45'), 'the amount');
    assert.ok(text.includes('GHS 1.00'), 'the fee');
    assert.ok(text.includes(payout.bank_reference), 'the bank reference');
    assert.match(text, /TEST MODE/);
    assertErrorEnvelope(
      await t.app.inject({ method: 'GET', url: `/api/v1/payouts/${payout.id}/receipt` }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('the receipt of a Mobile Money payout masks the phone number', async () => {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 50_000);
    const recipient = await momoRecipient(t, m.test_api_key, '0241234567');
    const payout = await createPayout(t, m.test_api_key, recipient.id, 10_000);
    const res = await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/receipt`);
    assert.equal(res.statusCode, 200);
    const text = await pdfText(res.rawPayload);
    assert.ok(text.includes(payout.reference));
    assert.ok(!text.includes('241234567'), `the full phone is not printed:\n${text}`);
    assert.ok(text.includes('+23324*****67'), `the masked phone is shown:\n${text}`);
  });

  // ---------- evidence ----------

  it('evidence files (a real PDF, PNG and JPEG) are stored and returned byte for byte with the sniffed content type', async () => {
    const { m, payout } = await paidTestPayout();
    const files = [
      { filename: 'proof.pdf', contentType: 'application/pdf', data: await tinyPdf(), expected: 'application/pdf' },
      { filename: 'proof.png', contentType: 'image/png', data: PNG_1X1, expected: 'image/png' },
      { filename: 'proof.jpg', contentType: 'image/jpeg', data: JPEG_1X1, expected: 'image/jpeg' },
    ];
    const ids: string[] = [];
    for (const file of files) {
      const res = await upload(m.test_api_key, payout.id, file);
      assert.equal(res.statusCode, 201, res.body);
      const evidence = res.json();
      assert.match(evidence.id, /^evd_/);
      assert.equal(evidence.payout_id, payout.id);
      assert.equal(evidence.content_type, file.expected);
      assert.equal(evidence.size_bytes, file.data.length);
      ids.push(evidence.id);
      const read = await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/evidence/${evidence.id}`);
      assert.equal(read.statusCode, 200);
      assert.equal(String(read.headers['content-type']).split(';')[0], file.expected);
      assert.ok(read.rawPayload.equals(file.data), `${file.filename} comes back byte for byte`);
    }
    const listed = (await getPayout(t, m.test_api_key, payout.id)).evidence as { id: string }[];
    assert.deepEqual(listed.map((e) => e.id).sort(), [...ids].sort());
  });

  it('a PNG named .pdf and labelled application/pdf is stored as image/png', async () => {
    const { m, payout } = await paidTestPayout();
    const res = await upload(m.test_api_key, payout.id, {
      filename: 'invoice.pdf',
      contentType: 'application/pdf',
      data: PNG_1X1,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().content_type, 'image/png');
    const read = await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/evidence/${res.json().id}`);
    assert.equal(String(read.headers['content-type']).split(';')[0], 'image/png');
    assert.ok(read.rawPayload.equals(PNG_1X1));
  });

  it('a text file, even named .pdf, is refused with 415; an empty file or no file is 400', async () => {
    const { m, payout } = await paidTestPayout();
    assertErrorEnvelope(
      await upload(m.test_api_key, payout.id, {
        filename: 'notes.txt',
        contentType: 'text/plain',
        data: Buffer.from('just some text\n'),
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    assertErrorEnvelope(
      await upload(m.test_api_key, payout.id, {
        filename: 'fake.pdf',
        contentType: 'application/pdf',
        data: Buffer.from('PDF-1.7 but not really'),
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    assertErrorEnvelope(
      await upload(m.test_api_key, payout.id, {
        filename: 'empty.png',
        contentType: 'image/png',
        data: Buffer.alloc(0),
      }),
      400,
      'INVALID_ARGUMENT',
    );
    const noFile = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payouts/${payout.id}/evidence`,
      headers: { authorization: `Bearer ${m.test_api_key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({}),
    });
    assertErrorEnvelope(noFile, 400, 'INVALID_ARGUMENT');
    assert.equal(((await getPayout(t, m.test_api_key, payout.id)).evidence as unknown[]).length, 0);
  });

  it('evidence may be 5 MB; one byte more is 413 and nothing is stored', async () => {
    const { m, payout } = await paidTestPayout();
    const atLimit = Buffer.alloc(EVIDENCE_BYTES_MAX, 0x20);
    PNG_1X1.copy(atLimit, 0);
    const ok = await upload(m.test_api_key, payout.id, {
      filename: 'big.png',
      contentType: 'image/png',
      data: atLimit,
    });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().size_bytes, EVIDENCE_BYTES_MAX);
    const overLimit = Buffer.alloc(EVIDENCE_BYTES_MAX + 1, 0x20);
    PNG_1X1.copy(overLimit, 0);
    assertErrorEnvelope(
      await upload(m.test_api_key, payout.id, { filename: 'huge.png', contentType: 'image/png', data: overLimit }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    assert.equal(((await getPayout(t, m.test_api_key, payout.id)).evidence as unknown[]).length, 1);
  });

  it("evidence is private to the payout's merchant and environment (404 otherwise)", async () => {
    const { m, payout } = await paidTestPayout();
    const res = await upload(m.test_api_key, payout.id, {
      filename: 'proof.png',
      contentType: 'image/png',
      data: PNG_1X1,
    });
    assert.equal(res.statusCode, 201, res.body);
    const evidenceId = res.json().id as string;
    const { m: other, payout: otherPayout } = await paidTestPayout();
    assertErrorEnvelope(
      await api(t, other.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/evidence/${evidenceId}`),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await api(t, other.test_api_key, 'GET', `/api/v1/payouts/${otherPayout.id}/evidence/${evidenceId}`),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await api(t, m.live_api_key, 'GET', `/api/v1/payouts/${payout.id}/evidence/${evidenceId}`),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/evidence/evd_missing`),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await upload(other.test_api_key, payout.id, { filename: 'x.png', contentType: 'image/png', data: PNG_1X1 }),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await t.app.inject({ method: 'GET', url: `/api/v1/payouts/${payout.id}/evidence/${evidenceId}` }),
      401,
      'UNAUTHORIZED',
    );
    assert.equal(
      (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/evidence/${evidenceId}`)).statusCode,
      200,
    );
  });
});
