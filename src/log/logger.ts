import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino censors wherever they appear in a logged object. Secrets must never reach a log
 * line; these catch the ones that could ride along inside a logged config, request or error.
 */
export const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'bearerToken',
  '*.bearerToken',
  'password',
  '*.password',
  '*.*.password',
  'token',
  '*.token',
  'url',
  'webhookUrl',
  '*.webhookUrl',
  'headers["x-api-key"]',
  'headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers.authorization',
  'secret',
  '*.secret',
  // a Redis error carries the command it answered: AUTH's arguments are the password (a
  // cluster's error carries its last node's error, one level further down)
  'command.args',
  '*.command.args',
  '*.*.command.args',
];

export interface LoggerFactoryOptions {
  /** Minimum level. Default: `info` (the CLI passes `NIGHTSHIFT_LOG_LEVEL` from its Settings). */
  level?: string;
  /** Where lines go. Default: stdout. */
  destination?: DestinationStream;
  /** Context fields on every line. */
  base?: Record<string, unknown>;
}

/** The one place loggers are made, so redaction is set once for the whole process. */
export function createLogger(options: LoggerFactoryOptions = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    base: options.base ?? { name: 'nightshift' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that drops everything: the default for library code nobody configured. */
export const silentLogger: Logger = pino({ level: 'silent' });
