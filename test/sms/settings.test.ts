// SMS_PROVIDER and its settings (issue 35): read and checked at start like every setting, one clear error per
// bad value, secrets never repeated; smsConfigured tells the payer page whether to offer an SMS receipt.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { smsProviderFor } from '../../src/sms/delivery.ts';
import { smsConfigured } from '../../src/sms/model.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

const HUBTEL = {
  SMS_PROVIDER: 'hubtel',
  HUBTEL_SMS_CLIENT_ID: 'cid',
  HUBTEL_SMS_CLIENT_SECRET: 's3cret-value',
  HUBTEL_SMS_SENDER: 'Sika Pay',
};
const MNOTIFY = { SMS_PROVIDER: 'mnotify', MNOTIFY_API_KEY: 'k3y-value', MNOTIFY_SENDER: 'SikaPay' };

describe('SMS settings', () => {
  it('without SMS_PROVIDER no SMS goes out: provider none, not configured, no provider built', () => {
    const config = loadConfig({});
    assert.deepEqual(config.sms, { provider: 'none', hubtel: null, mnotify: null });
    assert.equal(smsConfigured(config), false);
    assert.equal(smsProviderFor(config.sms), null);
    // The other provider's settings are ignored, not refused, while it is not chosen.
    assert.equal(loadConfig({ SMS_PROVIDER: 'none', MNOTIFY_SENDER: '!!!' }).sms.provider, 'none');
  });

  it('takes Hubtel with its documented base by default, or another base', () => {
    const config = loadConfig(HUBTEL);
    assert.deepEqual(config.sms, {
      provider: 'hubtel',
      hubtel: { clientId: 'cid', clientSecret: 's3cret-value', sender: 'Sika Pay', url: 'https://sms.hubtel.com/v1' },
      mnotify: null,
    });
    assert.equal(smsConfigured(config), true);
    assert.equal(smsProviderFor(config.sms)?.id, 'hubtel');
    assert.equal(
      loadConfig({ ...HUBTEL, HUBTEL_SMS_URL: 'http://127.0.0.1:9/v1' }).sms.hubtel?.url,
      'http://127.0.0.1:9/v1',
    );
  });

  it('takes mNotify with its documented base by default', () => {
    const config = loadConfig(MNOTIFY);
    assert.deepEqual(config.sms.mnotify, {
      apiKey: 'k3y-value',
      sender: 'SikaPay',
      url: 'https://api.mnotify.com/api',
    });
    assert.equal(smsConfigured(config), true);
    assert.equal(smsProviderFor(config.sms)?.id, 'mnotify');
  });

  it('names each bad value once, and never repeats a secret', () => {
    assert.deepEqual(problemsOf({ SMS_PROVIDER: 'twilio' }), [
      'SMS_PROVIDER must be none, hubtel or mnotify (got "twilio")',
    ]);
    assert.deepEqual(problemsOf({ SMS_PROVIDER: 'hubtel' }), [
      'HUBTEL_SMS_CLIENT_ID must be set when SMS_PROVIDER is hubtel',
      'HUBTEL_SMS_CLIENT_SECRET must be set when SMS_PROVIDER is hubtel',
      'HUBTEL_SMS_SENDER must be set when SMS_PROVIDER is hubtel',
    ]);
    assert.deepEqual(problemsOf({ SMS_PROVIDER: 'mnotify' }), [
      'MNOTIFY_API_KEY must be set when SMS_PROVIDER is mnotify',
      'MNOTIFY_SENDER must be set when SMS_PROVIDER is mnotify',
    ]);
    assert.deepEqual(problemsOf({ ...HUBTEL, HUBTEL_SMS_SENDER: 'SikaPayments1' }), [
      'HUBTEL_SMS_SENDER must be 1 to 11 letters, digits or spaces, with a letter (got "SikaPayments1")',
    ]);
    assert.deepEqual(problemsOf({ ...MNOTIFY, MNOTIFY_SENDER: '0244123456' }), [
      'MNOTIFY_SENDER must be 1 to 11 letters, digits or spaces, with a letter (got "0244123456")',
    ]);
    assert.deepEqual(problemsOf({ ...MNOTIFY, MNOTIFY_URL: 'ftp://api.mnotify.com' }), [
      'MNOTIFY_URL must be an http:// or https:// URL (got "ftp://api.mnotify.com")',
    ]);
    assert.deepEqual(problemsOf({ ...HUBTEL, HUBTEL_SMS_URL: 'not a url' }), [
      'HUBTEL_SMS_URL must be an http:// or https:// URL (got "not a url")',
    ]);
    const all = problemsOf({ ...HUBTEL, HUBTEL_SMS_SENDER: '', HUBTEL_SMS_URL: 'x' }).join('\n');
    assert.ok(!all.includes('s3cret-value'), 'the secret is never printed');
  });
});
