// LIKE patterns of text a person typed: its wildcards (%, _) and the escape (\) taken literally.

const escaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A LIKE pattern matching text that begins with `prefix`. */
export const likePrefix = (prefix: string) => `${escaped(prefix)}%`;

/** A LIKE pattern matching text that holds `part` anywhere. */
export const likeContaining = (part: string) => `%${escaped(part)}%`;
