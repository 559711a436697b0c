// The browser tests' app (test/browser/*.test.ts): ../browser/helpers.ts startBrowserApp (a test app listening on
// 127.0.0.1 and Chromium) started by a before hook and closed, Chromium first, by an after hook.
import { startBrowserApp, type BrowserApp } from '../browser/helpers.ts';
import { useStarted } from './hooks.ts';

/** Registers the hooks; `ready` is handed the app once it listens and Chromium runs. */
export function useBrowserApp(
  ready: (app: BrowserApp) => void | Promise<void>,
  env: Record<string, string> = {},
): void {
  useStarted(() => startBrowserApp(env), ready);
}
