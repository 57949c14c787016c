import { readFileSync } from 'node:fs';

/**
 * The package's folder and version, found by walking up from this module (it runs from src/
 * and from dist/src/).
 */
function findPackage(): { root: URL; version: string } {
  for (let dir = new URL('.', import.meta.url); dir.pathname !== '/'; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'nightshift' && pkg.version) return { root: dir, version: pkg.version };
    } catch {
      // no package.json at this level: keep walking up
    }
  }
  return { root: new URL('.', import.meta.url), version: '0.0.0' };
}

const found = findPackage();
export const version = found.version;
/** The package's own folder, for files it ships (config/demo.yaml). */
export const packageRoot: URL = found.root;
