// npm run docs:errors: writes docs/errors.md from the error catalogue.
import { writeFileSync } from 'node:fs';
import { HTTP_STATUS_OF } from '../src/http/errors.ts';
import { errorTableMarkdown } from '../src/lib/error-table.ts';

writeFileSync(new URL('../docs/errors.md', import.meta.url), errorTableMarkdown(HTTP_STATUS_OF));
console.log('docs/errors.md written');
