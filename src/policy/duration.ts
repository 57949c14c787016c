const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 } as const;

/**
 * A duration: one or more `<integer><unit>` parts with units d, h, m, s, largest unit first, each
 * unit at most once (`90s`, `15m`, `2h`, `1h30m`, `1d`). Milliseconds are not offered: nothing in
 * a schedule needs them, and `5m` misread as milliseconds would be a costly typo.
 */
export const DURATION_PATTERN = /^(?=\d)(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Milliseconds in a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return undefined;
  const [, d, h, m, s] = match;
  return (
    Number(d ?? 0) * UNIT_MS.d +
    Number(h ?? 0) * UNIT_MS.h +
    Number(m ?? 0) * UNIT_MS.m +
    Number(s ?? 0) * UNIT_MS.s
  );
}

/** A duration as a policy writes it, largest unit first: `1h30m`, `45s`; `0s` for nothing. */
export function formatDuration(ms: number): string {
  let rest = Math.round(ms / 1000) * 1000;
  let text = '';
  for (const [unit, size] of Object.entries(UNIT_MS)) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text || '0s';
}
