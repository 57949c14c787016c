import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { censor } from './censor.js';

export type { Logger } from 'pino';

export interface LoggerFactoryOptions {
  /** Minimum level. Default: `info` (the CLI passes `NIGHTSHIFT_LOG_LEVEL` from its Settings). */
  level?: string;
  /** Where lines go. Default: stdout. */
  destination?: DestinationStream;
  /** Context fields on every line. */
  base?: Record<string, unknown>;
}

const keepAsIs = (value: unknown): unknown => value;

/** `fields` with its `err` as pino's standard serializer writes an error (anything else as it is). */
function withSerializedError(fields: Record<string, unknown>): Record<string, unknown> {
  return fields.err === undefined ? fields : { ...fields, err: pino.stdSerializers.err(fields.err as Error) };
}

/** The one place loggers are made, so censoring is set once for the whole process. */
export function createLogger(options: LoggerFactoryOptions = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    base: options.base ?? { name: 'nightshift' },
    // censored here rather than by pino's `redact` (see censor.ts); an error is serialized
    // first, so what it carries (a Redis command's arguments) is censored too
    formatters: { bindings: censor, log: (fields) => censor(withSerializedError(fields)) },
    serializers: { err: keepAsIs },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const root = options.destination ? pino(config, options.destination) : pino(config);
  // pino applies `formatters.bindings` to the root's bindings alone; every child (a descendant
  // is made from its parent, so inherits this) censors its own
  const child = root.child;
  root.child = function censoredChild(this: Logger, bindings, childOptions) {
    return child.call(this, censor(bindings), childOptions);
  } as Logger['child'];
  return root;
}

/** A logger that drops everything: the default for library code nobody configured. */
export const silentLogger: Logger = pino({ level: 'silent' });
