/** What was read of a response body. */
export interface BodyPrefix {
  /** The bytes read, as UTF-8: all of the body, or its first `maxBytes` when `truncated`. */
  readonly text: string;
  /** More followed; the stream was destroyed instead of read further. */
  readonly truncated: boolean;
}

/** A response body as undici hands it over: a stream of chunks that can be destroyed. */
export interface ReadableBody extends AsyncIterable<Uint8Array> {
  destroy(): unknown;
}

/**
 * Reads at most `maxBytes` of `body` (a webhook's answer; the API client reads its answers in
 * `exchange.ts`). Beyond that the stream is destroyed, not drained: a huge answer costs `maxBytes`
 * of memory and its connection is closed rather than read to its end.
 */
export async function readAtMost(body: ReadableBody, maxBytes: number): Promise<BodyPrefix> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    if (length + chunk.byteLength > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - length));
      // leaving the loop early destroys the stream; say so rather than rely on it
      body.destroy();
      return { text: Buffer.concat(chunks).toString('utf8'), truncated: true };
    }
    chunks.push(chunk);
    length += chunk.byteLength;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}

/**
 * `text` without its last `length` characters when it was cut short: a secret cut in two at the
 * cut would escape a scrub that looks for the whole secret.
 */
export function withoutCutTail(prefix: BodyPrefix, length: number): string {
  return prefix.truncated ? prefix.text.slice(0, Math.max(0, prefix.text.length - length)) : prefix.text;
}
