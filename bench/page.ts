// The payer page as a phone opens it: Debian's Chromium (never a downloaded browser) loads /pay/{id}
// cold, at phone width, once on the loopback and once on an emulated 3G link (1.6 Mbit/s down,
// 150 ms round trip); bytes transferred (every response: compressed body plus headers) and time to
// DOMContentLoaded. Median of several cold loads.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
const LOADS = 5;
const THREE_G = {
  offline: false,
  latency: 150,
  downloadThroughput: (1.6 * 1024 * 1024) / 8,
  uploadThroughput: (750 * 1024) / 8,
};

export interface PageResult {
  path: string;
  requests: number;
  bytesTransferred: number;
  domContentLoadedMs: number;
  domContentLoaded3gMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchPayerPage(baseUrl: string, sessionId: string): Promise<PageResult | { skipped: string }> {
  if (!existsSync(CHROMIUM_PATH)) return { skipped: `no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)` };
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS, headless: true });
  const path = `/pay/${sessionId}`;
  try {
    const load = async (throttled: boolean) => {
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
      });
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      if (throttled) await cdp.send('Network.emulateNetworkConditions', THREE_G);
      let bytes = 0;
      let requests = 0;
      cdp.on('Network.loadingFinished', (event: { encodedDataLength: number }) => {
        bytes += event.encodedDataLength;
        requests++;
      });
      await page.goto(`${baseUrl}${path}`, { waitUntil: 'load' });
      const dcl = await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        return nav.domContentLoadedEventEnd - nav.startTime;
      });
      await page.waitForTimeout(200); // late loadingFinished events
      await context.close();
      return { bytes, requests, dcl };
    };
    const fast = [];
    const slow = [];
    for (let i = 0; i < LOADS; i++) fast.push(await load(false));
    for (let i = 0; i < LOADS; i++) slow.push(await load(true));
    return {
      path,
      requests: median(fast.map((r) => r.requests)),
      bytesTransferred: median(fast.map((r) => r.bytes)),
      domContentLoadedMs: median(fast.map((r) => r.dcl)),
      domContentLoaded3gMs: median(slow.map((r) => r.dcl)),
    };
  } finally {
    await browser.close();
  }
}
