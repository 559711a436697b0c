// The API reference at /docs: Swagger UI (@fastify/swagger-ui) themed as Sika's, reading /docs/json (the
// same document as /openapi.json). Swagger UI rather than Scalar or Redoc: it was already a dependency,
// its scripts ship in the package (nothing from a CDN, so it works on a machine without internet), it
// needs no inline script and no eval, and it runs on every Node the project supports (Scalar's Fastify
// plugin wants Node 22 and serves a 4.9 MB script; Redoc's standalone bundle pulls React and MobX in).

/**
 * What the page may load, and nothing more: every script is a file under /docs/static (so no hash and
 * no 'unsafe-inline' for scripts, no 'unsafe-eval'), the document is fetched from this origin, images
 * are Swagger UI's own data: icons. Its bundle adds one <style> element of its own, allowed by its
 * hash rather than by 'unsafe-inline': a Swagger UI upgrade that changes it shows up as a CSP violation
 * in test/browser/docs.test.ts. No upgrade-insecure-requests (the stock policy's): on a plain-HTTP
 * deployment it sends the page's requests to https.
 */
export const DOCS_CSP = {
  'default-src': ["'none'"],
  'base-uri': ["'none'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'", "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"],
};

/**
 * Sika's look over Swagger UI's: the console's navy and blue, its system font, the Swagger top bar (its
 * logo and a box to load another document, which a merchant has no use for) hidden, and colours dark
 * enough for AA contrast where Swagger UI's own fall short (the grey method and the muted texts). An open
 * operation's responses table (its Links column) scrolls inside its block at 390 px, never the page.
 */
export const DOCS_THEME_CSS = `
body{background:#f5f6f8;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.swagger-ui .topbar{display:none}
.swagger-ui,.swagger-ui .info .title,.swagger-ui .opblock-tag,.swagger-ui .opblock .opblock-summary-description,.swagger-ui .info li,.swagger-ui .info p,.swagger-ui .info table{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1d21}
.swagger-ui .info .title small{background:#4a5360}.swagger-ui .info .title small.version-stamp{background:#0d5a26}
.swagger-ui a.nostyle,.swagger-ui .info a{color:#0b57d0}.swagger-ui .opblock-tag a.nostyle{color:#13233a}
.swagger-ui .scheme-container{background:#fff;box-shadow:none;border-bottom:1px solid #d9dde3}
.swagger-ui .btn.authorize{color:#0d5a26;border-color:#0d5a26}.swagger-ui .btn.authorize svg{fill:#0d5a26}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#0b57d0}
.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#0d5a26}
.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#6b4a00}
.swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0b6b63}
.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b3261e}
.swagger-ui .opblock-tag small,.swagger-ui .opblock .opblock-summary-path__deprecated,.swagger-ui .model-title,.swagger-ui .prop-format,.swagger-ui .parameter__in{color:#4a5360}
.swagger-ui .opblock .opblock-summary-operation-id,.swagger-ui .opblock .opblock-summary-path{color:#1a1d21}
.swagger-ui .json-schema-2020-12-expand-deep-button{color:#4a5360}.swagger-ui .response-control-media-type__accept-message{color:#0d5a26}
.swagger-ui .highlight-code .microlight{background:#13233a!important}.swagger-ui .highlight-code .microlight span{color:#fff!important}
.swagger-ui .responses-inner{overflow-x:auto;max-width:100%}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
`;

/** Makes Swagger UI's root the page's main landmark (its markup has none), loaded from /docs/static/theme like the rest. */
export const DOCS_THEME_JS = "document.getElementById('swagger-ui').setAttribute('role','main');\n";

/** @fastify/swagger-ui's options for /docs: Sika's title, theme and policy, and no call to Swagger's online validator. */
export const docsUiOptions = {
  routePrefix: '/docs',
  staticCSP: DOCS_CSP,
  theme: {
    title: 'Sika API reference',
    css: [{ filename: 'sika.css', content: DOCS_THEME_CSS }],
    js: [{ filename: 'sika.js', content: DOCS_THEME_JS }],
  },
  uiConfig: { docExpansion: 'list' as const, deepLinking: true, validatorUrl: null },
};
