// A QR code as a small inline SVG, drawn on the server (no image request, no client code). One path:
// each dark run of a row is one `h` segment of a 1-unit stroke, so a slip reference stays under 2 KB.
import qrcode from 'qrcode-generator';

/** Quiet zone around the symbol, in modules (the QR standard asks for 4). */
const QUIET_ZONE_MODULES = 4;

export function qrSvg(text: string, label: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const count = qr.getModuleCount();
  const size = count + QUIET_ZONE_MODULES * 2;
  let path = '';
  for (let row = 0; row < count; row++) {
    let col = 0;
    while (col < count) {
      if (!qr.isDark(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < count && qr.isDark(row, col)) col++;
      path += `M${start + QUIET_ZONE_MODULES} ${row + QUIET_ZONE_MODULES + 0.5}h${col - start}`;
    }
  }
  const escaped = label.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  return `<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" role="img" aria-label="${escaped}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" stroke="#000" stroke-width="1"/></svg>`;
}
