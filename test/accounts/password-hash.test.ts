// Password hashes (src/accounts/password-hash.ts): argon2id at full cost everywhere but a test run, the smallest
// cost under NODE_ENV=test, and a hash of either cost verifying whatever the process's own setting.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import argon2 from 'argon2';
import {
  PASSWORD_HASH_PARAMS,
  TEST_PASSWORD_HASH_PARAMS,
  hashPassword,
  passwordHashOptions,
  verifyNothing,
  verifyPassword,
} from '../../src/accounts/password-hash.ts';

describe('password hashes', () => {
  it('full cost unless NODE_ENV is test: 64 MiB, 3 passes, 4 lanes, at least what OWASP asks of argon2id', () => {
    for (const NODE_ENV of [undefined, 'production', 'development', '', 'TEST', 'testing'])
      assert.deepEqual(passwordHashOptions({ NODE_ENV }), PASSWORD_HASH_PARAMS, String(NODE_ENV));
    assert.deepEqual(PASSWORD_HASH_PARAMS, { memoryCost: 65_536, timeCost: 3, parallelism: 4 });
    assert.ok(PASSWORD_HASH_PARAMS.memoryCost >= 19 * 1024 && PASSWORD_HASH_PARAMS.timeCost >= 2);
    assert.deepEqual(passwordHashOptions({ NODE_ENV: 'test' }), TEST_PASSWORD_HASH_PARAMS);
  });

  it('a full-cost hash (as a server makes it) and a test-cost one both verify, and nothing else does', async () => {
    const full = await argon2.hash('correct horse battery', { type: argon2.argon2id, ...PASSWORD_HASH_PARAMS });
    assert.match(full, /^\$argon2id\$v=19\$m=65536,p=4,t=3\$/);
    const made = await hashPassword('correct horse battery');
    assert.match(made, /^\$argon2id\$v=19\$m=\d+,p=\d+,t=\d+\$/);
    for (const hash of [full, made]) {
      assert.equal(await verifyPassword(hash, 'correct horse battery'), true);
      assert.equal(await verifyPassword(hash, 'correct horse batterY'), false);
    }
    assert.equal(await verifyPassword('not a hash', 'correct horse battery'), false);
  });

  it('an unknown account verifies against a hash nobody knows the password of: always false', async () => {
    for (const guess of ['', 'correct horse battery', 'x'.repeat(200)]) assert.equal(await verifyNothing(guess), false);
  });
});
