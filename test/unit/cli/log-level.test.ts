import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/exit.js';
import { logLevel } from '../../../src/cli/runtime.js';

describe('NIGHTSHIFT_LOG_LEVEL', () => {
  it('defaults to info and takes any pino level or silent', () => {
    expect(logLevel({})).toBe('info');
    expect(logLevel({ NIGHTSHIFT_LOG_LEVEL: '' })).toBe('info');
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
      expect(logLevel({ NIGHTSHIFT_LOG_LEVEL: level })).toBe(level);
  });

  it('refuses an unknown level with a usage error naming the levels (exit 2), not a stack trace', () => {
    expect(() => logLevel({ NIGHTSHIFT_LOG_LEVEL: 'verbose' })).toThrow(UsageError);
    expect(() => logLevel({ NIGHTSHIFT_LOG_LEVEL: 'verbose' })).toThrow(
      'NIGHTSHIFT_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "verbose"',
    );
  });
});
