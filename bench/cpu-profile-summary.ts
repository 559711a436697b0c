// A V8 .cpuprofile (node --cpu-prof) summed by self time: by place (a package under node_modules, a
// node: internal, or one of our source files) and by function. For the bench's profiling runs.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

function placeOf(url: string): string {
  if (url === '') return '(native, GC, idle)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  const ours = /\/(src|bench)\/(.+)$/.exec(url);
  return ours ? `${ours[1]}/${ours[2]}` : url;
}

/**
 * Lines: total sampled time, then the top places and functions by self time with their share. window
 * (µs on the monotonic clock, process.hrtime of any process on the machine) keeps only its samples.
 */
export function summariseCpuProfile(
  path: string,
  window: { fromUs: number; toUs: number } = { fromUs: -Infinity, toUs: Infinity },
  top = 15,
): string[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let atUs = profile.startTime;
  profile.samples.forEach((id, i) => {
    const deltaUs = profile.timeDeltas[i] ?? 0;
    atUs += deltaUs;
    if (atUs >= window.fromUs && atUs <= window.toUs) selfUs.set(id, (selfUs.get(id) ?? 0) + deltaUs);
  });
  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    totalUs += us;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const place = placeOf(frame.url);
    places.set(place, (places.get(place) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${place}:${frame.lineNumber + 1}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([name, us]) =>
          `    ${((us / busyUs) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`,
      );
  return [
    `  CPU profile ${path}: ${(busyUs / 1e6).toFixed(1)} s busy of ${(totalUs / 1e6).toFixed(1)} s sampled`,
    '  by place (self time):',
    ...rows(places),
    '  by function (self time):',
    ...rows(functions),
  ];
}
