// `npm install` is quiet on every Node line package.json's `engines` names (issue 29): no installed
// package wants a Node that `engines` admits but it does not (npm's EBADENGINE), and every install script
// is approved in `allowScripts` (npm 11 warns about the others and skips them). Read from package-lock.json,
// so a dependency upgrade that brings either back fails here, whichever Node runs the suite.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface Manifest {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
}
interface LockEntry {
  name?: string;
  version?: string;
  engines?: { node?: string } | string[];
  hasInstallScript?: boolean;
  link?: boolean;
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};
/** The installed packages (not this project, not its workspace links), with their names. */
const installed = Object.entries(lock.packages)
  .filter(([path, entry]) => path.includes('node_modules/') && !entry.link)
  .map(([path, entry]) => ({
    name: entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
    ...entry,
  }));

/** The oldest and a late release of each line `engines` admits (e.g. 20.19.0 and 20.99.0). */
function supportedVersions(range: string): string[] {
  return range.split('||').flatMap((part) => {
    const oldest = semver.minVersion(part.trim());
    assert.ok(oldest, `engines part ${part} has a lowest version`);
    const [major] = oldest.version.split('.');
    return [oldest.version, `${major}.99.0`].filter((version) => semver.satisfies(version, part.trim()));
  });
}

describe('npm install is quiet on every supported Node', () => {
  it('engines admits the Node running this suite and the LTS lines 22, 24 and 26, and no end-of-life odd line', () => {
    assert.ok(
      semver.satisfies(process.versions.node, manifest.engines.node),
      `${process.versions.node} is outside engines ${manifest.engines.node}`,
    );
    for (const version of ['22.12.0', '24.0.0', '26.0.0', '26.99.0'])
      assert.ok(semver.satisfies(version, manifest.engines.node), version);
    for (const version of ['20.11.0', '21.7.0', '23.0.0', '25.0.0'])
      assert.ok(!semver.satisfies(version, manifest.engines.node), version);
  });

  it('every installed package accepts the oldest and the latest release of every line engines admits (no EBADENGINE)', () => {
    const versions = supportedVersions(manifest.engines.node);
    assert.ok(versions.length >= 8, versions.join(', '));
    const refused: string[] = [];
    for (const entry of installed) {
      const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (!wanted) continue;
      for (const version of versions)
        if (!semver.satisfies(version, wanted))
          refused.push(`${entry.name}@${entry.version} wants node ${wanted}, not ${version}`);
    }
    assert.ok(
      installed.some((entry) => entry.name === 'cookie'),
      'the check reads the lockfile (cookie is installed)',
    );
    assert.deepEqual(refused, []);
  });

  it('allowScripts approves exactly the installed packages with install scripts', () => {
    const withScripts = [
      ...new Set(installed.filter((entry) => entry.hasInstallScript).map((entry) => entry.name)),
    ].sort();
    assert.ok(withScripts.includes('argon2'), `packages with install scripts: ${withScripts.join(', ')}`);
    const approved = Object.entries(manifest.allowScripts ?? {})
      .filter(([, allowed]) => allowed)
      .map(([spec]) => spec.replace(/(?<=.)@.*$/, ''));
    assert.deepEqual([...new Set(approved)].sort(), withScripts);
  });
});
