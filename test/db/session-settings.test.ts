// Every PostgreSQL connection Sika opens starts with JIT off (src/db/postgres.ts sessionOptions): at a year of data
// JIT compiling made a Payments search that reads 356 buffers take 557 ms instead of 3 ms.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sessionOptions } from '../../src/db/postgres.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

describe('session options', () => {
  it("turn JIT off, and put an operator's PGOPTIONS after it so that they can turn it back on", () => {
    assert.equal(sessionOptions(undefined), '-c jit=off');
    assert.equal(sessionOptions(''), '-c jit=off');
    assert.equal(sessionOptions(' -c jit=on '), '-c jit=off -c jit=on');
  });
});

describe(`session settings (${storageKind})`, {
  skip: storageKind === 'embedded' && 'embedded PGlite has no JIT',
}, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const jit = "SELECT current_setting('jit') AS jit";

  it('JIT is off on the pool, inside a transaction, and on the pipelined read and write connections', async () => {
    assert.deepEqual(await t.db.query(jit), [{ jit: 'off' }]);
    assert.deepEqual(await t.db.transaction((tx) => tx.query(jit)), [{ jit: 'off' }]);
    assert.deepEqual(await t.db.read('test_jit_read', jit), [{ jit: 'off' }]);
    assert.deepEqual(await t.db.write('test_jit_write', jit), [{ jit: 'off' }]);
  });
});
