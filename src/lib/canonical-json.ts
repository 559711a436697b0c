import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted, so equal values (from JSON, form or multipart) hash equal. Stored
 * Idempotency-Key hashes depend on this exact text: a change to it must keep the output byte for byte.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  // The default sort compares UTF-16 code units, as a < b does.
  for (const key of Object.keys(object).sort()) {
    const v = object[key];
    if (v === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
    first = false;
  }
  return `${out}}`;
}

export const sha256Hex = (text: string): string => hash('sha256', text, 'hex');
