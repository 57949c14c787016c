import { expect } from 'vitest';

/** Asserts the headers every answer of the ops server carries; `header` reads one by name. */
export function expectSecurityHeaders(header: (name: string) => unknown, label: string): void {
  expect(header('x-content-type-options'), label).toBe('nosniff');
  expect(header('x-frame-options'), label).toBe('DENY');
  expect(header('referrer-policy'), label).toBe('no-referrer');
  expect(header('content-security-policy'), label).toContain("frame-ancestors 'none'");
}
