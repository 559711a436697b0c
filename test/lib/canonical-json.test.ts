// canonicalJson is the text Idempotency-Key request hashes are computed from, and those hashes are
// stored: its output must not change. The reference below is the first implementation, kept as the
// specification; the property compares the two on random JSON values (with undefined members, which
// parsed bodies never have but built objects may).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, sha256Hex } from '../../src/lib/canonical-json.ts';

function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
}

describe('canonicalJson', () => {
  it('matches the reference text on random values, key order and undefined members included', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('array'), tie('object')),
      leaf: fc.oneof(
        fc.constant(null),
        fc.constant(undefined),
        fc.boolean(),
        fc.integer(),
        fc.double({ noNaN: true }),
        fc.string({ unit: 'binary' }),
      ),
      array: fc.array(tie('node'), { maxLength: 5 }),
      object: fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('node'), { maxKeys: 6 }),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        assert.equal(canonicalJson(v), reference(v));
      }),
      { numRuns: 2_000 },
    );
  });

  it('sorts keys and hashes equal values equally', () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }] }), '{"a":[{"d":2}],"b":1}');
    assert.equal(sha256Hex(canonicalJson({ b: 1, a: 2 })), sha256Hex(canonicalJson({ a: 2, b: 1 })));
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
