/** Where the simulator reads the time; tests may pass their own to pin timestamps. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Every time field the simulator writes: ISO 8601 in UTC (the spec shows only "string"). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
