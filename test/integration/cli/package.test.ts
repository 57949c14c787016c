import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('the package as users install it', () => {
  it('exports ApiClient and ApiError from the built entry under its own name', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { ApiClient, ApiError } from 'nightshift'; console.log(typeof ApiClient, typeof ApiError);",
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(out.trim()).toBe('function function');
  });

  it('runs the nightshift bin with --help and exits 0', () => {
    const run = spawnSync(process.execPath, ['bin/nightshift.js', '--help'], { cwd: root, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: nightshift');
  });

  it('exits 2 on an unknown command', () => {
    const run = spawnSync(process.execPath, ['bin/nightshift.js', 'no-such-command'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('no-such-command');
  });
});
