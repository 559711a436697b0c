// SMTP_URL and MAIL_FROM (issue 33): read and checked at start like every setting, one clear error each, and
// a bad SMTP_URL is refused without repeating it (it holds the SMTP password).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { absoluteUrl, plainMailBodies } from '../../src/mail/compose.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

describe('mail settings', () => {
  it('without SMTP_URL mail goes to the log, from the default sender', () => {
    const config = loadConfig({});
    assert.equal(config.smtpUrl, null);
    assert.equal(config.mailFrom, 'Sika <no-reply@localhost>');
  });

  it('takes smtp:// and smtps:// URLs with credentials, and a sender with or without a name', () => {
    assert.equal(
      loadConfig({ SMTP_URL: 'smtp://u:p@mail.example.com:587' }).smtpUrl,
      'smtp://u:p@mail.example.com:587',
    );
    assert.equal(loadConfig({ SMTP_URL: 'smtps://mail.example.com' }).smtpUrl, 'smtps://mail.example.com');
    assert.equal(loadConfig({ MAIL_FROM: 'Sika Pay <pay@example.com>' }).mailFrom, 'Sika Pay <pay@example.com>');
    assert.equal(loadConfig({ MAIL_FROM: 'pay@example.com' }).mailFrom, 'pay@example.com');
  });

  it('refuses another scheme or a non-URL without repeating the value, and a sender that is not an address', () => {
    for (const bad of ['http://u:secret-pw@mail.example.com', 'not a url secret-pw', 'smtp://']) {
      const problems = problemsOf({ SMTP_URL: bad });
      assert.equal(problems.length, 1, bad);
      assert.match(problems[0]!, /^SMTP_URL must be smtp:\/\//);
      assert.ok(!problems[0]!.includes('secret-pw'), 'the password is never printed');
    }
    assert.match(problemsOf({ MAIL_FROM: 'Sika' })[0] ?? '', /^MAIL_FROM must be an address/);
    assert.match(problemsOf({ MAIL_FROM: 'Sika <no address>' })[0] ?? '', /^MAIL_FROM must be an address/);
  });

  it('builds absolute links from BASE_URL and escapes user data in the HTML body', () => {
    assert.equal(
      absoluteUrl('https://pay.example.com/', '/signup/verify/t'),
      'https://pay.example.com/signup/verify/t',
    );
    assert.throws(() => absoluteUrl('https://pay.example.com', 'signup'));
    const { text, html } = plainMailBodies({
      paragraphs: ['Hello <b>Ama & Sons</b>'],
      link: { url: 'https://pay.example.com/x?a=1&b=2', label: 'Open' },
    });
    assert.match(text, /Hello <b>Ama & Sons<\/b>\n\nOpen: https:\/\/pay\.example\.com\/x\?a=1&b=2/);
    assert.ok(html.includes('Hello &lt;b&gt;Ama &amp; Sons&lt;/b&gt;'));
    assert.ok(html.includes('<a href="https://pay.example.com/x?a=1&amp;b=2">Open</a>'));
  });
});
