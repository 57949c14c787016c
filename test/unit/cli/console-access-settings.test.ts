import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tokensFileEntry } from '../../../src/cli/commands/console-token.js';
import { UsageError } from '../../../src/cli/exit.js';
import { opsSettings } from '../../../src/cli/ops.js';
import { loadSettings } from '../../../src/config/index.js';
import { newConsoleToken, readPrincipals } from '../../../src/ops/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tokensFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'nightshift-tokens-'));
  dirs.push(dir);
  const file = join(dir, 'tokens.yaml');
  writeFileSync(file, text);
  return file;
}

describe('the console settings of a service', () => {
  it('reads the entry `console-token` prints as a principal of the tokens file', () => {
    const { token, hash } = newConsoleToken();
    const file = tokensFile(`principals:\n${tokensFileEntry('ana', 'operator', hash)}\n`);
    const settings = opsSettings(loadSettings({ NIGHTSHIFT_CONSOLE_TOKENS_FILE: file }));
    expect(settings?.principals?.find(token)).toEqual({ name: 'ana', role: 'operator' });
    expect(readPrincipals(`principals:\n${tokensFileEntry('bo', 'viewer', hash)}`, 'x').size).toBe(1);
  });

  it('lets principals guard a bind beyond loopback, as the ops token does', () => {
    const { hash } = newConsoleToken();
    const file = tokensFile(`principals:\n${tokensFileEntry('ana', 'viewer', hash)}\n`);
    expect(
      opsSettings(loadSettings({ NIGHTSHIFT_HTTP_HOST: '0.0.0.0', NIGHTSHIFT_CONSOLE_TOKENS_FILE: file }))
        ?.host,
    ).toBe('0.0.0.0');
    expect(() => opsSettings(loadSettings({ NIGHTSHIFT_HTTP_HOST: '0.0.0.0' }))).toThrow(UsageError);
  });

  it('refuses to start on a tokens file with a bad entry (exit 2), naming the file and the entry', () => {
    const file = tokensFile('principals:\n  - { name: ana, role: root, token: "sha256:00" }\n');
    expect(() => opsSettings(loadSettings({ NIGHTSHIFT_CONSOLE_TOKENS_FILE: file }))).toThrow(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: principals\\[0\\] \\(ana\\)\\.role`),
    );
    expect(() =>
      opsSettings(loadSettings({ NIGHTSHIFT_CONSOLE_TOKENS_FILE: join(tmpdir(), 'no-such-tokens.yaml') })),
    ).toThrow(/NIGHTSHIFT_CONSOLE_TOKENS_FILE=.*cannot be read \(ENOENT\)/);
  });

  it('lets the local user act only on loopback without tokens, and names them after the OS user', () => {
    expect(opsSettings(loadSettings({ NIGHTSHIFT_CONSOLE_ACTIONS: 'local', USER: 'ana' }))?.localUser).toBe(
      'ana',
    );
    expect(opsSettings(loadSettings({}))?.localUser).toBeUndefined();
    expect(() =>
      opsSettings(
        loadSettings({
          NIGHTSHIFT_CONSOLE_ACTIONS: 'local',
          NIGHTSHIFT_HTTP_HOST: '0.0.0.0',
          NIGHTSHIFT_UI_TOKEN: 't',
        }),
      ),
    ).toThrow(/for a loopback console without tokens/);
  });
});
