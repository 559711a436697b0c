/** This package's version (scripts/build.mjs checks it against package.json). */
export const VERSION = '0.1.0';
