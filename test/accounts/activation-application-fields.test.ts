// The Go-Live application's field checks (issue 33, src/accounts/activation-fields.ts): every field with
// valid and invalid examples and the message a person reads, a property check of the Ghana Card PIN over
// generated strings, partial drafts (each given field checked, the rest absent) and the requirement list.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  applicationRequirements,
  checkDateOfBirth,
  checkDigitalAddress,
  checkDraft,
  checkGhanaCardPin,
  checkGhanaPhone,
  checkRegistrationNumber,
  checkTin,
  checkWebsite,
  draftAsInput,
  type DocumentPresence,
} from '../../src/accounts/activation-fields.ts';

const TODAY = new Date('2026-11-28T12:00:00Z');

const valid = (check: (v: string) => { ok: boolean }, values: string[]) => {
  for (const v of values) assert.equal(check(v).ok, true, `${JSON.stringify(v)} should pass`);
};
const invalid = (check: (v: string) => { ok: boolean; message?: string }, values: string[], message: RegExp) => {
  for (const v of values) {
    const c = check(v) as { ok: boolean; message?: string };
    assert.equal(c.ok, false, `${JSON.stringify(v)} should fail`);
    assert.match(c.message ?? '', message, `the message for ${JSON.stringify(v)} says what is expected`);
  }
};

/** A complete, valid form as the page posts it. */
export const completeForm = (overrides: Record<string, unknown> = {}) => ({
  business_type: 'limited_company',
  legal_name: 'Adwoa Foods Limited',
  trading_name: 'Adwoa Foods',
  registration_number: 'CS123456789',
  tin: 'C0012345678',
  address: '12 Oxford Street, Osu, Accra',
  digital_address: 'GA-183-8164',
  phone: '030 123 4567',
  website: 'https://adwoafoods.com.gh',
  products: 'Packaged foods and spices',
  monthly_volume_band: '10k_to_50k',
  directors: [
    {
      full_name: 'Adwoa Mensah',
      ghana_card_pin: 'GHA-123456789-0',
      date_of_birth: '1985-03-21',
      phone: '024 123 4567',
    },
  ],
  settlement_type: 'bank',
  settlement_bank_code: 'GCB',
  settlement_account_number: '1234567890123',
  settlement_account_name: 'Adwoa Foods Limited',
  ...overrides,
});

describe('Go-Live application fields', () => {
  it('Ghana Card PIN: GHA-, 9 digits, a dash, 1 digit (case and spaces forgiven)', () => {
    valid(checkGhanaCardPin, ['GHA-123456789-0', 'gha-000000001-9', ' GHA-987654321-5 ']);
    assert.deepEqual(checkGhanaCardPin('gha-123456789-0'), { ok: true, value: 'GHA-123456789-0' });
    invalid(
      checkGhanaCardPin,
      [
        'GHA-12345678-0',
        'GHA-1234567890-0',
        'GHA-123456789-00',
        'GHA123456789-0',
        'GHB-123456789-0',
        'GHA-12345678X-0',
        '',
      ],
      /GHA-, 9 digits, a dash and 1 digit/,
    );
  });

  it('Ghana Card PIN, as a property: exactly the strings of the shape pass', () => {
    const digits = (n: number) => Array.from({ length: n }, () => String(randomInt(10))).join('');
    for (let i = 0; i < 500; i++) {
      const pin = `GHA-${digits(9)}-${digits(1)}`;
      assert.equal(checkGhanaCardPin(pin).ok, true, pin);
      // One character changed, dropped or added breaks the shape.
      const at = randomInt(pin.length);
      const dropped = pin.slice(0, at) + pin.slice(at + 1);
      const added = `${pin.slice(0, at)}7${pin.slice(at)}`;
      const swapped = pin.slice(0, at) + (/\d/.test(pin[at]!) ? 'X' : '5') + pin.slice(at + 1);
      for (const wrong of [dropped, added, swapped]) assert.equal(checkGhanaCardPin(wrong).ok, false, wrong);
    }
  });

  it('GhanaPost GPS: two letters, 3 or 4 digits, 4 digits', () => {
    valid(checkDigitalAddress, ['GA-183-8164', 'AK-0123-4567', 'ga-183-8164']);
    invalid(
      checkDigitalAddress,
      ['GA-18-8164', 'G-183-8164', 'GA-183-816', 'GA1838164', 'GA-12345-6789'],
      /two letters, 3 or 4 digits and 4 digits/,
    );
  });

  it('Registrar-General number and TIN', () => {
    valid(checkRegistrationNumber, ['CS123456789', 'BN123456', 'cs-123456789']);
    invalid(checkRegistrationNumber, ['123456789', 'CS12', 'C$123456789'], /CS123456789/);
    valid(checkTin, ['C0012345678', 'P0012345678', 'GHA-123456789-0']);
    invalid(checkTin, ['C001234567', '00012345678', 'GHA-12345-0'], /a letter and 10 digits/);
  });

  it('phones are Ghana numbers, stored as +233', () => {
    assert.deepEqual(checkGhanaPhone('024 123 4567'), { ok: true, value: '+233241234567' });
    assert.deepEqual(checkGhanaPhone('+233 30 123 4567'), { ok: true, value: '+233301234567' });
    invalid(checkGhanaPhone, ['12345', '+234 803 123 4567', '024 123 456'], /Ghana number/);
  });

  it('website: an http(s) address or a social handle', () => {
    valid(checkWebsite, ['https://adwoafoods.com.gh', 'http://example.com/shop', '@adwoa.foods']);
    invalid(
      checkWebsite,
      ['ftp://example.com', 'javascript:alert(1)', 'example', 'https://localhost', '@'],
      /http\(s\) address/,
    );
  });

  it('date of birth: a real date, 18 or older', () => {
    valid((v) => checkDateOfBirth(v, TODAY), ['1985-03-21', '2008-11-28', '2000-02-29']);
    invalid((v) => checkDateOfBirth(v, TODAY), ['2001-02-29', '1985-13-01', '21/03/1985', '1899-12-31'], /real date/);
    invalid((v) => checkDateOfBirth(v, TODAY), ['2008-11-29', '2020-01-01'], /at least 18/);
  });

  it('every business field is checked, with a message naming the field', () => {
    const { problems } = checkDraft(
      {
        business_type: 'corporation',
        legal_name: '1',
        trading_name: '<b>',
        registration_number: 'X',
        tin: 'X',
        address: 'A',
        digital_address: 'X',
        phone: '1',
        website: 'x',
        products: 'A',
        monthly_volume_band: 'lots',
      },
      TODAY,
    );
    assert.deepEqual(
      problems.map((p) => p.field),
      [
        'business_type',
        'legal_name',
        'trading_name',
        'registration_number',
        'tin',
        'address',
        'digital_address',
        'phone',
        'website',
        'products',
        'monthly_volume_band',
      ],
    );
    assert.match(problems[0]!.message, /business type must be one of/);
    assert.match(problems.at(-1)!.message, /monthly volume/);
  });

  it('a partial draft keeps what is given and checks only that', () => {
    const { draft, problems } = checkDraft(
      { legal_name: '  Adwoa   Foods ', directors: [{ ghana_card_pin: 'GHA-123456789-0' }, {}] },
      TODAY,
    );
    assert.deepEqual(problems, []);
    assert.equal(draft.legal_name, 'Adwoa Foods');
    assert.equal(draft.business_type, undefined);
    assert.deepEqual(draft.directors, [{ ghana_card_pin: 'GHA-123456789-0' }], 'an empty row is dropped');
    const bad = checkDraft({ directors: [{ full_name: 'Kofi Boateng', ghana_card_pin: 'GHA-1-0' }] }, TODAY);
    assert.deepEqual(
      bad.problems.map((p) => p.field),
      ['directors[0][ghana_card_pin]'],
    );
    assert.match(bad.problems[0]!.message, /^Director 1: The Ghana Card PIN/);
  });

  it('the settlement account: a bank account of digits, or a wallet of its network', () => {
    assert.deepEqual(checkDraft(completeForm(), TODAY).problems, []);
    const wallet = checkDraft(
      completeForm({
        settlement_type: 'momo',
        settlement_network: 'mtn',
        settlement_account_number: '024 123 4567',
        settlement_bank_code: '',
      }),
      TODAY,
    );
    assert.deepEqual(wallet.problems, []);
    assert.equal(wallet.draft.settlement.account_number, '+233241234567');
    const wrongNetwork = checkDraft(
      completeForm({
        settlement_type: 'momo',
        settlement_network: 'telecel',
        settlement_account_number: '024 123 4567',
      }),
      TODAY,
    );
    assert.match(wrongNetwork.problems[0]!.message, /MTN MoMo number, not Telecel Cash/);
    const badAccount = checkDraft(completeForm({ settlement_account_number: '12-AB' }), TODAY);
    assert.deepEqual(
      badAccount.problems.map((p) => p.field),
      ['settlement_account_number'],
    );
    const badType = checkDraft(completeForm({ settlement_type: 'cheque' }), TODAY);
    assert.equal(badType.problems[0]!.field, 'settlement_type');
  });

  it('the same Ghana Card PIN twice is refused', () => {
    const director = {
      full_name: 'Adwoa Mensah',
      ghana_card_pin: 'GHA-123456789-0',
      date_of_birth: '1985-03-21',
      phone: '0241234567',
    };
    const { problems } = checkDraft(
      completeForm({ directors: [director, { ...director, full_name: 'Ama Mensah' }] }),
      TODAY,
    );
    assert.match(problems[0]!.message, /listed for two directors/);
  });

  it('the requirement list names what is missing; complete with every document: empty', () => {
    const empty = applicationRequirements(checkDraft({}, TODAY).draft, []);
    assert.ok(empty.includes('legal_name') && empty.includes('directors') && empty.includes('settlement_type'));
    assert.ok(!empty.includes('trading_name'), 'the trading name is optional');
    const { draft } = checkDraft(completeForm(), TODAY);
    const documents: DocumentPresence[] = [
      { kind: 'certificate_of_registration', director_index: null },
      { kind: 'proof_of_address', director_index: null },
      { kind: 'ghana_card_front', director_index: 0 },
    ];
    assert.deepEqual(applicationRequirements(draft, documents), ['documents.ghana_card_back[0]']);
    assert.deepEqual(
      applicationRequirements(draft, [...documents, { kind: 'ghana_card_back', director_index: 0 }]),
      [],
    );
    const government = checkDraft(completeForm({ business_type: 'government', registration_number: '' }), TODAY).draft;
    assert.deepEqual(
      applicationRequirements(government, documents.slice(1).concat({ kind: 'ghana_card_back', director_index: 0 })),
      [],
      'a government body has no registration number or certificate',
    );
  });

  it('a stored draft reads back as the same form', () => {
    const { draft } = checkDraft(completeForm(), TODAY);
    assert.deepEqual(checkDraft(draftAsInput(draft), TODAY).draft, draft);
  });
});
