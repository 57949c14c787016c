import { createRequire } from 'node:module';
import pino from 'pino';
import type pretty from 'pino-pretty';
import type { Settings } from '../config/index.js';
import { within } from '../engine/index.js';
import { createLogger, type Logger } from '../log/index.js';

const require = createRequire(import.meta.url);

type BackgroundDestination = ReturnType<typeof pino.destination>;

/** The destinations this process's JSON loggers write to in the background. */
const background = new Set<BackgroundDestination>();

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
          // CPU than its checkpoints; a service waits for them before it exits (`logsWritten`). Not
          // gathered into larger writes: a line must reach the log at once, and a process killed
          // outright loses what waits.
          inBackground(pino.destination({ dest: out.fd, sync: false })),
  });
}

function inBackground(destination: BackgroundDestination): BackgroundDestination {
  background.add(destination);
  return destination;
}

/**
 * Resolves once every line logged so far is written, or after `limitMs` whatever the log's reader
 * does (a full pipe, a closed one). For a service about to exit at once: pino's own flush at exit
 * writes the lines still waiting there and then, while one already on its way in the background
 * lands whenever the thread pool writes it: after them, when the pool is busy.
 */
export async function logsWritten(limitMs: number): Promise<void> {
  const drained = [...background].map(
    (destination) =>
      new Promise<void>((resolve) => {
        destination.once('drain', () => resolve());
        // an empty write drains once everything before it is written: at once when idle, else
        // after the write under way and the lines waiting behind it
        destination.write('');
      }),
  );
  await within(Promise.all(drained), limitMs);
}
