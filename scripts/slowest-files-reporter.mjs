// A node:test reporter that prints, when the run ends, the ten test files whose top-level tests took longest
// (summed per file), so the file that slows `npm test` shows in every run's output. It also records every file's
// figure for the next run's order (test-durations.mjs).
import { recordDurations } from './test-durations.mjs';

/** The reporter; `sourceOf` names the source file of a bundled test file (test-bundle.mjs). */
export const slowestFilesReporter = (sourceOf = (file) => file) =>
  async function* slowestFiles(source) {
    const seconds = new Map();
    for await (const event of source) {
      if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
        const file = sourceOf(event.data.file);
        seconds.set(file, (seconds.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0) / 1000);
      }
    }
    recordDurations(seconds);
    const slowest = [...seconds].sort((a, b) => b[1] - a[1]).slice(0, 10);
    if (slowest.length < 2) return;
    const cwd = `${process.cwd()}/`;
    yield '\nslowest files:\n';
    for (const [file, took] of slowest) yield `  ${took.toFixed(1).padStart(6)} s  ${file.replace(cwd, '')}\n`;
  };
