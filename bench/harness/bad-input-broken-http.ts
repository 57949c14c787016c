import type { Prng } from '../../src/sim/random.js';

/**
 * Broken HTTP for the bad-input round's response fuzzing (bench/harness/bad-input.ts): bytes
 * written straight on the socket that no well-behaved server sends.
 */

/** One of seven malformed answers, drawn from `rng`, built around a real answer's body. */
export function brokenHttp(rng: Prng, realBody: Buffer, status: number): { raw: Buffer; what: string } {
  const head = (lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  switch (rng.int(0, 6)) {
    case 0:
      return {
        raw: Buffer.concat([
          head([
            'HTTP/1.1 200 OK',
            `content-length: ${realBody.length + 500}`,
            'content-type: application/json',
          ]),
          realBody,
        ]),
        what: 'content-length longer than the body, then close',
      };
    case 1:
      return {
        raw: Buffer.concat([
          head(['HTTP/1.1 200 OK', 'transfer-encoding: chunked', 'content-type: application/json']),
          Buffer.from('5\r\n{"Err\r\nzz\r\n'),
        ]),
        what: 'broken chunked encoding',
      };
    case 2:
      return {
        raw: Buffer.from(
          rng.pick([
            'HTTP/1.1 abc OK\r\n\r\n',
            'HTTP/9.9 200 OK\r\n\r\n',
            'garbage\r\n\r\n',
            'HTTP/1.1 200\r\n',
            '\r\n\r\n',
          ]),
          'latin1',
        ),
        what: 'garbled status line',
      };
    case 3:
      return {
        raw: Buffer.concat([
          head(['HTTP/1.1 200 OK', 'content-length: 5', 'content-length: 9']),
          Buffer.from('{"a":1}xx'),
        ]),
        what: 'two content-lengths',
      };
    case 4:
      return {
        raw: Buffer.concat([
          head(['HTTP/1.1 200 OK', `x-bad: a\u0001b`, 'content-type: application/json']),
          realBody,
        ]),
        what: 'control character in a header (close-delimited body)',
      };
    case 5:
      return { raw: head([`HTTP/1.1 ${status} X`, `x-long: ${'a'.repeat(100_000)}`]), what: '100 kB header' };
    default:
      return {
        raw: Buffer.concat([
          head(['HTTP/1.0 200 OK', 'content-type: application/json']),
          realBody.subarray(0, Math.floor(realBody.length / 2)),
        ]),
        what: 'HTTP/1.0, close-delimited, half a body',
      };
  }
}
