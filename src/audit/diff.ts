// An audit row's before and after as a person reads them: one line per field, nested objects flattened to
// dotted names ("settings.paused"), each field changed, added, removed or unchanged. Pure; the audit page and
// its CSV draw from it.

export type FieldChangeKind = 'changed' | 'added' | 'removed' | 'unchanged';

export interface FieldChange {
  field: string;
  kind: FieldChangeKind;
  /** The value as text (strings as they are, anything else as JSON); null when absent on that side. */
  before: string | null;
  after: string | null;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Dotted field name → value text; a value that is not an object is the one field "value". */
function flatten(value: unknown, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (value === null || value === undefined) return out;
  if (!isPlainObject(value)) {
    out.set(prefix || 'value', typeof value === 'string' ? value : JSON.stringify(value));
    return out;
  }
  const keys = Object.keys(value);
  if (keys.length === 0 && prefix) out.set(prefix, '{}');
  for (const key of keys) flatten(value[key], prefix ? `${prefix}.${key}` : key, out);
  return out;
}

/** Every field of before and after, by name (stored JSON keeps no key order). */
export function auditDiff(before: unknown, after: unknown): FieldChange[] {
  const was = flatten(before);
  const now = flatten(after);
  const fields = [...new Set([...now.keys(), ...was.keys()])].sort();
  return fields.map((field) => {
    const b = was.get(field) ?? null;
    const a = now.get(field) ?? null;
    const kind: FieldChangeKind = b === null ? 'added' : a === null ? 'removed' : a === b ? 'unchanged' : 'changed';
    return { field, kind, before: b, after: a };
  });
}

/** The changes as one line of text (the CSV's cell): "field: before -> after; field: added x; field: removed (was y)". */
export function changesText(changes: readonly FieldChange[]): string {
  return changes
    .filter((c) => c.kind !== 'unchanged')
    .map((c) =>
      c.kind === 'added'
        ? `${c.field}: added ${c.after}`
        : c.kind === 'removed'
          ? `${c.field}: removed (was ${c.before})`
          : `${c.field}: ${c.before} -> ${c.after}`,
    )
    .join('; ');
}
