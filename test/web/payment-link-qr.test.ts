// A payment link's QR codes and poster (issue 35): /l/{slug}/qr.svg and qr.png decode to the link's url with
// jsQR (a maintained decoder, not our encoder read back by itself), and /l/{slug}/poster.pdf is an A5 page with
// the merchant, the link, the amount, the url and the call to scan.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { randomToken } from '../../src/lib/ids.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';
import { pdfText } from '../support/pdf-text.ts';

/** A link written as the API writes one (the API is another file's subject). */
async function insertLink(
  t: TestContext,
  m: CreatedMerchant,
  options: { amountMinor?: number | null; environment?: 'test' | 'live'; active?: boolean } = {},
) {
  const link = {
    id: `pl_${randomToken(24).toLowerCase()}`,
    slug: randomToken(10),
    name: 'Harvest offering',
  };
  await t.db.query(
    `INSERT INTO payment_links (id, merchant_id, environment, slug, name, amount_minor, amount_min_minor, amount_max_minor, active)
     VALUES ($1, $2, $3, $4, $5, $6, 100, 100000000, $7)`,
    [
      link.id,
      m.merchant_id,
      options.environment ?? 'test',
      link.slug,
      link.name,
      options.amountMinor === undefined ? 2550 : options.amountMinor,
      options.active ?? true,
    ],
  );
  return link;
}

/** Decodes RGBA pixels with jsQR; the text, or null. jsqr is CommonJS: its function is also its `default`, which NodeNext types. */
const jsQR = jsQRModule.default;
const decode = (rgba: Uint8ClampedArray, width: number, height: number) => jsQR(rgba, width, height)?.data ?? null;

/**
 * The SVG drawn as pixels, `scale` a module: its one path is only `M x y h n` segments, each a run of n modules
 * of the row whose middle is y (a 1-unit stroke), on a white square of the viewBox's size.
 */
function rasteriseSvg(svg: string, scale: number) {
  const size = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)![1]);
  const path = /<path d="([^"]*)"/.exec(svg)![1]!;
  const segments = [...path.matchAll(/M(\d+) (\d+(?:\.5)?)h(\d+)/g)];
  assert.equal(segments.map((s) => s[0]).join(''), path, 'the path is only M x y h n segments');
  const width = size * scale;
  const rgba = new Uint8ClampedArray(width * width * 4).fill(255);
  for (const [, x, y, n] of segments) {
    const row = Number(y) - 0.5;
    for (let py = row * scale; py < (row + 1) * scale; py++)
      for (let px = Number(x) * scale; px < (Number(x) + Number(n)) * scale; px++) {
        const at = (py * width + px) * 4;
        rgba[at] = rgba[at + 1] = rgba[at + 2] = 0;
      }
  }
  return { rgba, width };
}

describe(`payment link QR codes and poster (${storageKind})`, () => {
  const t = useTestApp();
  const get = (url: string) => t.app.inject({ method: 'GET', url });
  const urlOf = (slug: string) => `${t.config.checkoutUrlHost}/l/${slug}`;

  it('qr.svg is a cacheable SVG that decodes to the link url', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m);
    const res = await get(`/l/${link.slug}/qr.svg`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^image\/svg\+xml/);
    assert.match(String(res.headers['cache-control']), /^public, max-age=\d+$/);
    assert.match(res.body, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    // Served alone, it has a size of its own (an img of it on the dashboard is not 0 px wide): 8 px a module.
    const viewBox = Number(/viewBox="0 0 (\d+) \1"/.exec(res.body)![1]);
    assert.match(res.body, new RegExp(`width="${viewBox * 8}" height="${viewBox * 8}"`));
    const { rgba, width } = rasteriseSvg(res.body, 6);
    assert.equal(decode(rgba, width, width), urlOf(link.slug));
  });

  it('qr.png is a PNG of at least 8 px a module with a 4-module quiet zone that decodes to the link url', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, { amountMinor: null });
    const res = await get(`/l/${link.slug}/qr.png`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'image/png');
    assert.match(String(res.headers['cache-control']), /^public, max-age=\d+$/);
    const png = PNG.sync.read(res.rawPayload);
    assert.equal(png.width, png.height);
    const rgba = new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length);
    assert.equal(decode(rgba, png.width, png.height), urlOf(link.slug));
    // The quiet zone: the first dark pixel of the middle of the top-left finder is 4 modules in; a module is 8 px or more.
    const dark = (x: number, y: number) => png.data[(y * png.width + x) * 4]! < 128;
    let first = 0;
    while (!dark(first, first)) first++;
    const sizeModules = (png.width - 2 * first) / 8;
    assert.ok(first >= 32 && first % 8 === 0, `quiet zone ${first} px`);
    assert.ok(
      Number.isInteger(sizeModules) && (sizeModules - 17) % 4 === 0,
      `a QR symbol of ${sizeModules} modules at 8 px`,
    );
  });

  it('the codes of a link that takes no payment answer 410', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, { active: false });
    for (const path of ['qr.svg', 'qr.png', 'poster.pdf'])
      assert.equal((await get(`/l/${link.slug}/${path}`)).statusCode, 410, path);
  });

  it('poster.pdf is an A5 page with the merchant, the link, the amount, the url and the call to scan', async () => {
    const m = await t.merchant();
    const merchantName = (
      await t.db.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [m.merchant_id])
    )[0]!.name;
    const fixed = await insertLink(t, m);
    const res = await get(`/l/${fixed.slug}/poster.pdf`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/pdf');
    assert.match(res.rawPayload.subarray(0, 5).toString('latin1'), /^%PDF-/);
    // A5 in points, as pdfkit writes the page's MediaBox.
    assert.match(res.rawPayload.toString('latin1'), /\/MediaBox \[0 0 419\.53 595\.28\]/);
    const text = (await pdfText(res.rawPayload)).replace(/\s+/g, ' ');
    for (const expected of [
      merchantName,
      'Harvest offering',
      'GHS 25.50',
      'Scan to pay with Mobile Money or card',
      urlOf(fixed.slug),
      'TEST MODE',
    ])
      assert.ok(text.includes(expected), `${expected} in: ${text}`);

    const open = await insertLink(t, m, { amountMinor: null, environment: 'live' });
    const openText = (await pdfText((await get(`/l/${open.slug}/poster.pdf`)).rawPayload)).replace(/\s+/g, ' ');
    assert.ok(openText.includes('Amount of your choice'), openText);
    assert.ok(!openText.includes('TEST MODE'), openText);
  });
});
