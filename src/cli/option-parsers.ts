import { InvalidArgumentError } from 'commander';
import { parseDuration } from '../policy/index.js';
import { UsageError } from './exit.js';

/** The longest hold or suspension: a year. Either is an exception; anything longer belongs in the policy. */
const MAX_EXCEPTION_MS = 366 * 86_400_000;

export function parseFor(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw new InvalidArgumentError('expected a duration like 90m, 2h or 3d');
  if (ms > MAX_EXCEPTION_MS)
    throw new InvalidArgumentError('at most 366d; put a longer exception in the policy');
  return ms;
}

export function parseUntil(text: string): Date {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text))
    throw new InvalidArgumentError(
      'expected an ISO 8601 instant with Z or an offset, e.g. 2026-12-01T08:00:00Z',
    );
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new InvalidArgumentError('not a valid date and time');
  return date;
}

/**
 * When a hold or suspension ends, from `--for` or `--until` (at most one; exactly one when
 * `required`); a time already past is bad usage.
 */
export function exceptionEnd(
  flags: { for?: number | undefined; until?: Date | undefined },
  now: Date,
  { required }: { required: boolean },
): Date | undefined {
  if (flags.for !== undefined && flags.until !== undefined)
    throw new UsageError('give one of --for <duration> and --until <instant>, not both');
  if (flags.for === undefined && flags.until === undefined) {
    if (required) throw new UsageError('give exactly one of --for <duration> and --until <instant>');
    return undefined;
  }
  const end = flags.until ?? new Date(now.getTime() + (flags.for ?? 0));
  if (end.getTime() <= now.getTime()) throw new UsageError(`--until ${end.toISOString()} is in the past`);
  return end;
}

export function positiveInt(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidArgumentError('expected a whole number of at least 1');
  return value;
}

/** `--since`: a duration back from now (`24h`, `7d`) or an ISO 8601 instant; epoch ms. */
export function parseSince(text: string): number {
  const ms = parseDuration(text);
  if (ms !== undefined && ms > 0) return Date.now() - ms;
  try {
    return parseUntil(text).getTime();
  } catch {
    throw new InvalidArgumentError('expected a duration back from now (24h, 7d) or an ISO 8601 instant');
  }
}
