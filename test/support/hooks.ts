// A describe block's hooks for what its tests share and that starts and closes (the test app, an app with Chromium,
// an app with providers' stand-ins): started by a before hook, closed by an after hook.
import { after, before } from 'node:test';
import { startTestApp, type TestContext } from './helpers.ts';

/**
 * Registers a before hook that runs `start` and hands what it started to `ready` (to keep the parts the tests use and
 * seed what they share), and an after hook that closes it.
 */
export function useStarted<T extends { close(): Promise<void> }>(
  start: () => Promise<T>,
  ready: (started: T) => void | Promise<void>,
): void {
  let started: T | undefined;
  before(async () => {
    started = await start();
    await ready(started);
  });
  after(() => started?.close());
}

/**
 * The test app (./helpers.ts startTestApp) through useStarted. The context returned reads the running app each time
 * it is used: in the tests and in hooks registered after this call, not while the describe block is being defined.
 */
export function useTestApp(
  env: Record<string, string> = {},
  options: Parameters<typeof startTestApp>[1] = {},
): TestContext {
  let running: TestContext | undefined;
  const current = (): TestContext => {
    if (!running) throw new Error('the test app starts in the before hook useTestApp registers: use it in a test');
    return running;
  };
  useStarted(
    () => startTestApp(env, options),
    (started) => {
      running = started;
    },
  );
  return {
    get app() {
      return current().app;
    },
    get db() {
      return current().db;
    },
    get config() {
      return current().config;
    },
    get webhookTargets() {
      return current().webhookTargets;
    },
    merchant: (merchantOptions) => current().merchant(merchantOptions),
    listen: () => current().listen(),
    close: () => current().close(),
  };
}
