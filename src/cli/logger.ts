import { createRequire } from 'node:module';
import pino from 'pino';
import type pretty from 'pino-pretty';
import type { Settings } from '../config/index.js';
import { createLogger, type Logger } from '../log/index.js';

const require = createRequire(import.meta.url);

/**
 * Logs for a service go to stdout, from `info` up; a command that prints results for people logs
 * to stderr, from `warn` up, so its output is not buried under a line per API call
 * (`NIGHTSHIFT_LOG_LEVEL` sets the level of both). JSON lines, or readable lines when the stream is
 * a terminal (`NIGHTSHIFT_LOG_FORMAT=json|pretty` decides instead); colours unless `NO_COLOR` is
 * set. Redaction happens before either.
 */
export function cliLogger(
  settings: Settings,
  stream: 'stdout' | 'stderr',
  base: Record<string, unknown> = {},
): Logger {
  const out = stream === 'stderr' ? process.stderr : process.stdout;
  const format = settings.log.format ?? (out.isTTY ? 'pretty' : 'json');
  return createLogger({
    level: settings.log.level ?? (stream === 'stderr' ? 'warn' : 'info'),
    base: { name: 'nightshift', ...base },
    destination:
      format === 'pretty'
        ? // loaded for a terminal only: a service writing JSON lines does without it
          (require('pino-pretty') as typeof pretty)({
            destination: out.fd,
            colorize: !settings.terminal.noColor,
            ignore: 'pid,hostname,name',
            translateTime: 'SYS:HH:MM:ss.l',
            sync: true,
          })
        : // written in the background: a line per API call, synchronously, cost a worker more
          // CPU than its checkpoints; pino flushes what is left when the process exits. Not
          // gathered into larger writes: a line must reach the log at once, and a process killed
          // outright loses what waits.
          pino.destination({ dest: out.fd, sync: false }),
  });
}
