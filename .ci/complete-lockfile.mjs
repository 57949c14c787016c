#!/usr/bin/env node
// The npm registry this project's machines reach serves only the linux builds of
// platform-specific packages, so `npm install` writes a lockfile without the other
// platforms' optional entries, and `npm ci` then refuses it as out of sync. This adds the
// missing entries (optional, with the os/cpu their names declare) so `npm ci` skips them on
// a platform they are not for. Run it after any change to dependencies:
//   node .ci/complete-lockfile.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const OS = [
  'darwin',
  'linux',
  'win32',
  'android',
  'freebsd',
  'openbsd',
  'netbsd',
  'sunos',
  'aix',
  'openharmony',
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];

function missingPackages() {
  let output = '';
  try {
    execFileSync('npm', ['ci', '--dry-run', '--ignore-scripts'], { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
  }
  return [...output.matchAll(/Missing: (@?[^@\s]+)@\S* from lock file/g)].map((m) => m[1]);
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const missing = new Set(missingPackages());
let added = 0;
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (!missing.has(name) || lock.packages[`node_modules/${name}`]) continue;
    const words = name.split(/[-/]/);
    lock.packages[`node_modules/${name}`] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...(words.some((w) => OS.includes(w)) ? { os: words.filter((w) => OS.includes(w)) } : {}),
      ...(words.some((w) => CPU.includes(w)) ? { cpu: words.filter((w) => CPU.includes(w)) } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`complete-lockfile: added ${added} of ${missing.size} missing optional entries\n`);
