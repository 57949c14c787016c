/** Every time field the simulator writes: ISO 8601 in UTC (the spec shows only "string"). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
