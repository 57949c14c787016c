import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingsFrom, UsageError } from '../../../src/cli/exit.js';
import {
  apiCredentials,
  ConfigError,
  loadSettings,
  policyKeys,
  uiToken,
  withVariables,
} from '../../../src/config/index.js';

function secretFile(content: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'nightshift-config-')), 'secret');
  writeFileSync(file, content);
  return file;
}

describe('settings from an empty environment', () => {
  it('take every documented default', () => {
    const settings = loadSettings({});
    expect(settings.api).toEqual({
      url: undefined,
      key: undefined,
      keyFile: undefined,
      bearerToken: undefined,
      timeoutMs: 30_000,
      rateLimit: undefined,
    });
    expect(settings.redis).toEqual({ url: undefined, prefix: 'nightshift', tls: false });
    expect(settings.worker).toEqual({
      concurrency: 50,
      pollIntervalMs: 5_000,
      lockMs: 30_000,
      maxStalls: 5,
      partSize: 500,
      shutdownGraceMs: 5_000,
    });
    expect(settings.scheduler).toEqual({ leadMs: 2_000 });
    expect(settings.history).toEqual({ perJob: 500, days: 30 });
    expect(settings.log).toEqual({ level: undefined, format: undefined });
    expect(settings.http).toEqual({
      host: undefined,
      port: undefined,
      uiToken: undefined,
      uiTokenFile: undefined,
      consoleTokens: undefined,
      consoleTokensFile: undefined,
      consoleActions: undefined,
    });
    expect(settings.terminal).toEqual({ noColor: false, dumb: false, ci: false });
  });

  it('treat an empty value as unset', () => {
    const settings = loadSettings({
      NIGHTSHIFT_WORKER_CONCURRENCY: '',
      NIGHTSHIFT_LOG_LEVEL: ' ',
      REDIS_URL: '',
    });
    expect(settings.worker.concurrency).toBe(50);
    expect(settings.log.level).toBeUndefined();
    expect(settings.redis.url).toBeUndefined();
  });
});

describe('values read into their types', () => {
  it('takes numbers, the log level and format, the port or off', () => {
    const settings = loadSettings({
      NIGHTSHIFT_WORKER_CONCURRENCY: '8',
      NIGHTSHIFT_API_RATE_LIMIT: '2.5',
      NIGHTSHIFT_LOG_LEVEL: 'debug',
      NIGHTSHIFT_LOG_FORMAT: 'json',
      NIGHTSHIFT_HTTP_PORT: '0',
    });
    expect(settings.worker.concurrency).toBe(8);
    expect(settings.api.rateLimit).toBe(2.5);
    expect(settings.log).toEqual({ level: 'debug', format: 'json' });
    expect(settings.http.port).toBe(0);
    expect(loadSettings({ NIGHTSHIFT_HTTP_PORT: 'OFF' }).http.port).toBe('off');
  });

  it('takes the console URL as people open it, without a trailing slash, and refuses one with a query or another scheme', () => {
    expect(
      loadSettings({ NIGHTSHIFT_CONSOLE_URL: 'https://ops.example.com/nightshift/' }).http.consoleUrl,
    ).toBe('https://ops.example.com/nightshift');
    expect(loadSettings({}).http.consoleUrl).toBeUndefined();
    expect(() => loadSettings({ NIGHTSHIFT_CONSOLE_URL: 'https://ops.example.com/?a=1' })).toThrow(
      /NIGHTSHIFT_CONSOLE_URL must have no \?query/,
    );
    expect(() => loadSettings({ NIGHTSHIFT_CONSOLE_URL: 'ftp://ops.example.com' })).toThrow(
      /NIGHTSHIFT_CONSOLE_URL must be an http/,
    );
    expect(() => loadSettings({ NIGHTSHIFT_CONSOLE_URL: 'ops.example.com' })).toThrow(
      /NIGHTSHIFT_CONSOLE_URL must be an http/,
    );
  });

  it('takes any pino level or silent', () => {
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const)
      expect(loadSettings({ NIGHTSHIFT_LOG_LEVEL: level }).log.level).toBe(level);
  });

  it.each([
    ['1', true],
    ['true', true],
    ['woodpecker', true],
    ['0', false],
    ['false', false],
    ['FALSE', false],
    ['', false],
  ])('CI=%s is CI: %s', (value, ci) => {
    expect(loadSettings({ CI: value }).terminal.ci).toBe(ci);
  });

  it('turns colour off for any non-empty NO_COLOR and for TERM=dumb only', () => {
    expect(loadSettings({ NO_COLOR: '0' }).terminal.noColor).toBe(true);
    expect(loadSettings({ NO_COLOR: '' }).terminal.noColor).toBe(false);
    expect(loadSettings({ TERM: 'dumb' }).terminal.dumb).toBe(true);
    expect(loadSettings({ TERM: 'xterm-256color' }).terminal.dumb).toBe(false);
  });

  it('keeps every variable for the policy to resolve, with a role’s own on top of them', () => {
    const settings = loadSettings({ DRILL_BACKUP_ID: 'b-1', NIGHTSHIFT_POLL_INTERVAL_MS: '1000' });
    expect(settings.environment.DRILL_BACKUP_ID).toBe('b-1');
    const role = withVariables(settings, { NIGHTSHIFT_POLL_INTERVAL_MS: '500', DEMO_UPTIME: 'x' });
    expect(role.worker.pollIntervalMs).toBe(500);
    expect(role.environment).toMatchObject({ DRILL_BACKUP_ID: 'b-1', DEMO_UPTIME: 'x' });
    expect(settings.worker.pollIntervalMs).toBe(1000);
  });
});

describe('a bad value', () => {
  it.each([
    [
      'NIGHTSHIFT_WORKER_CONCURRENCY',
      'lots',
      'NIGHTSHIFT_WORKER_CONCURRENCY must be a positive number, got "lots"',
    ],
    ['NIGHTSHIFT_LOCK_MS', '-5', 'NIGHTSHIFT_LOCK_MS must be a positive number, got "-5"'],
    ['NIGHTSHIFT_API_RATE_LIMIT', '0', 'NIGHTSHIFT_API_RATE_LIMIT must be a positive number, got "0"'],
    [
      'NIGHTSHIFT_LOG_LEVEL',
      'verbose',
      'NIGHTSHIFT_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "verbose"',
    ],
    ['NIGHTSHIFT_LOG_FORMAT', 'text', 'NIGHTSHIFT_LOG_FORMAT must be one of json, pretty, got "text"'],
    [
      'NIGHTSHIFT_HTTP_PORT',
      '70000',
      'NIGHTSHIFT_HTTP_PORT must be a port number (0 for any free port) or off, got "70000"',
    ],
    ['NIGHTSHIFT_API_URL', 'api.example', 'NIGHTSHIFT_API_URL must start with http:// or https://'],
    [
      'NIGHTSHIFT_API_URL',
      'https://',
      'NIGHTSHIFT_API_URL is not a URL (expected e.g. https://api.example.com)',
    ],
  ])('%s=%s is refused, naming the variable, the problem and what was expected', (name, value, message) => {
    expect(() => loadSettings({ [name]: value })).toThrow(ConfigError);
    expect(() => loadSettings({ [name]: value })).toThrow(message);
  });

  it('is bad usage for the CLI (exit 2), with every problem named at once', () => {
    const read = () => settingsFrom({ NIGHTSHIFT_MAX_STALLS: 'x', NIGHTSHIFT_LOG_LEVEL: 'loud' });
    expect(read).toThrow(UsageError);
    expect(read).toThrow(
      'NIGHTSHIFT_MAX_STALLS must be a positive number, got "x"; NIGHTSHIFT_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"',
    );
  });

  it('never repeats a secret: an API key given twice is named, its values are not', () => {
    const file = secretFile('k-from-file-7Qz\n');
    let message = '';
    try {
      loadSettings({ NIGHTSHIFT_API_KEY: 'k-from-env-3Wx', NIGHTSHIFT_API_KEY_FILE: file });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe('NIGHTSHIFT_API_KEY and NIGHTSHIFT_API_KEY_FILE are both set; set only one of them');
  });
});

describe('credentials', () => {
  it('names every missing API variable at once', () => {
    expect(() => apiCredentials(loadSettings({}))).toThrow(
      'NIGHTSHIFT_API_URL is not set (the base URL of the management API); NIGHTSHIFT_API_KEY (or NIGHTSHIFT_API_KEY_FILE) is not set',
    );
  });

  it('reads a key or token from the file named, and names the variable of a file that is empty or missing', () => {
    const url = { NIGHTSHIFT_API_URL: 'https://api.example' };
    expect(apiCredentials(loadSettings({ ...url, NIGHTSHIFT_API_KEY_FILE: secretFile('k\n') }))).toEqual({
      baseUrl: 'https://api.example',
      apiKey: 'k',
      bearerToken: undefined,
    });
    expect(() =>
      apiCredentials(loadSettings({ ...url, NIGHTSHIFT_API_KEY_FILE: secretFile(' \n') })),
    ).toThrow('NIGHTSHIFT_API_KEY_FILE names an empty file');
    expect(uiToken(loadSettings({ NIGHTSHIFT_UI_TOKEN_FILE: secretFile('t-1\n') }))).toBe('t-1');
    expect(
      uiToken(loadSettings({ NIGHTSHIFT_UI_TOKEN: 't-2', NIGHTSHIFT_UI_TOKEN_FILE: '/nonexistent' })),
    ).toBe('t-2');
    expect(() => uiToken(loadSettings({ NIGHTSHIFT_UI_TOKEN_FILE: '/nonexistent/token' }))).toThrow(
      'NIGHTSHIFT_UI_TOKEN_FILE cannot be read (ENOENT)',
    );
  });
});

describe('policy keys (NIGHTSHIFT_POLICY_KEY)', () => {
  const KEY = 'p'.repeat(32);
  const NEXT = 'q'.repeat(64);

  it('takes one key or several, separated by commas or blanks, each of them used', () => {
    expect(policyKeys(loadSettings({}))).toBeUndefined();
    expect(policyKeys(loadSettings({ NIGHTSHIFT_POLICY_KEY: KEY }))).toEqual([KEY]);
    expect(policyKeys(loadSettings({ NIGHTSHIFT_POLICY_KEY: `${NEXT}, ${KEY}` }))).toEqual([NEXT, KEY]);
    expect(policyKeys(loadSettings({ NIGHTSHIFT_POLICY_KEY: `${NEXT} ${KEY}` }))).toEqual([NEXT, KEY]);
  });

  it('reads the keys from the file named, one a line during a key change', () => {
    expect(policyKeys(loadSettings({ NIGHTSHIFT_POLICY_KEY_FILE: secretFile(`${NEXT}\n${KEY}\n`) }))).toEqual(
      [NEXT, KEY],
    );
    expect(() => policyKeys(loadSettings({ NIGHTSHIFT_POLICY_KEY_FILE: '/nonexistent/key' }))).toThrow(
      'NIGHTSHIFT_POLICY_KEY_FILE cannot be read (ENOENT)',
    );
  });

  it('refuses a key shorter than 32 characters, naming its place but never a key', () => {
    const short = 'short-but-secret';
    for (const read of [
      () => loadSettings({ NIGHTSHIFT_POLICY_KEY: `${KEY},${short}` }),
      () => policyKeys(loadSettings({ NIGHTSHIFT_POLICY_KEY_FILE: secretFile(`${KEY}\n${short}\n`) })),
    ]) {
      let message = '';
      try {
        read();
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(
        /^NIGHTSHIFT_POLICY_KEY(_FILE names a file that)? must hold keys of at least 32/,
      );
      expect(message).toContain('key 2 of 2 is shorter');
      expect(message).not.toContain(short);
      expect(message).not.toContain(KEY);
    }
  });

  it('refuses the key and its file both set', () => {
    expect(() => loadSettings({ NIGHTSHIFT_POLICY_KEY: KEY, NIGHTSHIFT_POLICY_KEY_FILE: '/k' })).toThrow(
      'NIGHTSHIFT_POLICY_KEY and NIGHTSHIFT_POLICY_KEY_FILE are both set; set only one of them',
    );
  });
});

describe('sink commands (NIGHTSHIFT_SINK_COMMANDS)', () => {
  it('is any program unset, no program as none, else the absolute paths listed', () => {
    expect(loadSettings({}).sinks.commands).toBeUndefined();
    expect(loadSettings({ NIGHTSHIFT_SINK_COMMANDS: 'none' }).sinks.commands).toEqual(new Set());
    expect(
      loadSettings({ NIGHTSHIFT_SINK_COMMANDS: '/usr/local/bin/store-secret, /opt/vault/put' }).sinks
        .commands,
    ).toEqual(new Set(['/usr/local/bin/store-secret', '/opt/vault/put']));
  });

  it('refuses a program named without its absolute path', () => {
    expect(() => loadSettings({ NIGHTSHIFT_SINK_COMMANDS: '/usr/bin/a,store-secret' })).toThrow(
      'NIGHTSHIFT_SINK_COMMANDS must be none or absolute program paths separated by commas (e.g. /usr/local/bin/store-secret), got "store-secret"',
    );
  });
});
