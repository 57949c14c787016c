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

type Fields = Record<string, unknown>;

const keepAsIs = (value: unknown): unknown => value;

/** `fields` with its `err` as pino's standard serializer writes an error (anything else as it is). */
function withSerializedError(fields: Fields): Fields {
  if (fields.err === undefined) return fields;
  const err: unknown = pino.stdSerializers.err(fields.err as Error);
  // spread to a plain object: what a child's own formatter does to plain data (a run hides its
  // policy's secret values) then reaches the error's message and fields too
  return { ...fields, err: err !== null && typeof err === 'object' ? { ...err } : err };
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
  // is made from its parent, so inherits this) censors its own. A child's own `formatters.log`
  // replaces the root's in pino: it is run between the error's serializing and the censoring,
  // so a run's lines (which hide the policy's secrets that way) are censored like any other
  const child = root.child;
  root.child = function censoredChild(this: Logger, bindings, childOptions) {
    const own = childOptions?.formatters?.log;
    const options = own
      ? {
          ...childOptions,
          formatters: {
            ...childOptions.formatters,
            log: (fields: object) => censor(own(withSerializedError(fields as Fields)) as Fields),
          },
        }
      : childOptions;
    return child.call(this, censor(bindings), options);
  } as Logger['child'];
  return root;
}

/** A logger that drops everything: the default for library code nobody configured. */
export const silentLogger: Logger = pino({ level: 'silent' });
