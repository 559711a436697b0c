// QR codes drawn on the server (no image request, no client code): a small inline SVG, and a PNG for a
// merchant to download or print (payment links, issue 35). Both from the same modules, with the same quiet zone.
import { deflateSync } from 'node:zlib';
import qrcode from 'qrcode-generator';

/** Quiet zone around the symbol, in modules (the QR standard asks for 4). */
export const QUIET_ZONE_MODULES = 4;
/** A PNG's pixels per module: 8 keeps a printed or photographed code sharp for any phone's camera. */
export const QR_PNG_MODULE_PX = 8;

/** The symbol's dark modules, row by row (no quiet zone), error correction M. */
export function qrModules(text: string): boolean[][] {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const count = qr.getModuleCount();
  return Array.from({ length: count }, (_, row) => Array.from({ length: count }, (_, col) => qr.isDark(row, col)));
}

/** Each row's dark runs as [row, first column, length]: one `h` segment of the SVG, one rectangle of the poster. */
export function darkRuns(modules: boolean[][]): [number, number, number][] {
  const runs: [number, number, number][] = [];
  modules.forEach((cells, row) => {
    let col = 0;
    while (col < cells.length) {
      if (!cells[col]) {
        col++;
        continue;
      }
      const start = col;
      while (col < cells.length && cells[col]) col++;
      runs.push([row, start, col - start]);
    }
  });
  return runs;
}

/**
 * One path: each dark run of a row is one `h` segment of a 1-unit stroke, so a slip reference stays under 2 KB.
 * modulePx gives the image a size of its own (a file served alone, shown by an img); inline, the page's CSS sizes it.
 */
export function qrSvg(text: string, label: string, options: { modulePx?: number } = {}): string {
  const modules = qrModules(text);
  const size = modules.length + QUIET_ZONE_MODULES * 2;
  const path = darkRuns(modules)
    .map(([row, col, length]) => `M${col + QUIET_ZONE_MODULES} ${row + QUIET_ZONE_MODULES + 0.5}h${length}`)
    .join('');
  const escaped = label.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  const sized = options.modulePx ? ` width="${size * options.modulePx}" height="${size * options.modulePx}"` : '';
  return `<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}"${sized} role="img" aria-label="${escaped}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" stroke="#000" stroke-width="1"/></svg>`;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/**
 * The QR code as a 1-bit greyscale PNG, QR_PNG_MODULE_PX pixels a module with the quiet zone. Written here with
 * node:zlib rather than with a PNG package: a black-and-white image needs only the header, one deflated
 * data chunk and the end chunk, some 30 lines, where a package would add a dependency to every server.
 */
export function qrPng(text: string, modulePx = QR_PNG_MODULE_PX): Buffer {
  const modules = qrModules(text);
  const sizeModules = modules.length + QUIET_ZONE_MODULES * 2;
  const sizePx = sizeModules * modulePx;
  const rowBytes = Math.ceil(sizePx / 8);
  // Each scanline: filter byte 0 (none), then the pixels, 1 bit each, 1 = white.
  const raw = Buffer.alloc((rowBytes + 1) * sizePx);
  for (let y = 0; y < sizePx; y++) {
    const line = y * (rowBytes + 1);
    const moduleRow = Math.floor(y / modulePx) - QUIET_ZONE_MODULES;
    for (let x = 0; x < sizePx; x++) {
      const moduleCol = Math.floor(x / modulePx) - QUIET_ZONE_MODULES;
      const dark = modules[moduleRow]?.[moduleCol] === true;
      const at = line + 1 + (x >> 3);
      if (!dark) raw[at] = raw[at]! | (0x80 >> (x & 7));
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(sizePx, 0);
  header.writeUInt32BE(sizePx, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
