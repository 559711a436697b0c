// Writes the API's OpenAPI document (what GET /openapi.json answers) without a running server: the app is
// built on an embedded in-memory storage, asked for its document and closed. The SDK's build
// (packages/node/scripts/build.mjs) generates its types from it.
//
//   node --import tsx scripts/openapi.ts [out-file]   (stdout when no file is given)
import { writeFileSync } from 'node:fs';
import { loadConfig } from '../src/config/index.ts';
import { openDb } from '../src/db/index.ts';
import { buildApp } from '../src/app.ts';

export async function openApiDocument(): Promise<unknown> {
  const config = loadConfig({ LOG_LEVEL: 'silent', WORKERS: 'off', REDIS_URL: '', BASE_URL: 'https://sika.example' });
  const db = await openDb({ databaseUrl: null, dataDir: null });
  try {
    const app = await buildApp({ config, db, logger: false, payoutRail: null });
    try {
      await app.ready();
      const response = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (response.statusCode !== 200)
        throw new Error(`GET /openapi.json answered ${response.statusCode}: ${response.body}`);
      return response.json();
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  if (process.argv[2]?.startsWith('-')) {
    console.error(
      'usage: node --import tsx scripts/openapi.ts [out-file]   (the document on stdout when no file is given)',
    );
    process.exit(process.argv[2] === '--help' || process.argv[2] === '-h' ? 0 : 2);
  }
  const document = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
  const out = process.argv[2];
  if (out) writeFileSync(out, document);
  else process.stdout.write(document);
}
