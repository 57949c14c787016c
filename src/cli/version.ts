import { readFileSync } from 'node:fs';

/** The package version, found by walking up from this module (it runs from src/ and from dist/src/). */
function readVersion(): string {
  for (let dir = new URL('.', import.meta.url); dir.pathname !== '/'; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'nightshift' && pkg.version) return pkg.version;
    } catch {
      // no package.json at this level: keep walking up
    }
  }
  return '0.0.0';
}

export const version = readVersion();
