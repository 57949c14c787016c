import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One answer of a HugeBodyServer: how much of its body went out before the client hung up. */
export interface HugeAnswer {
  /** Bytes of the body the server handed to the socket (the kernel's buffers hold some of them). */
  sent: number;
  /** The client closed the connection before the whole body was sent. */
  cutShort: boolean;
}

/** An HTTP server on 127.0.0.1 that answers every request with a body of `size` bytes, streamed. */
export interface HugeBodyServer {
  url: string;
  /** One entry per request, filled in once its answer has ended. */
  answers: HugeAnswer[];
  /** Resolves with the answer of request `index` (0-based) once it has ended. */
  answer(index: number): Promise<HugeAnswer>;
  close(): Promise<void>;
}

export interface HugeBodyOptions {
  status: number;
  /** Body bytes in total. */
  size: number;
  /** The body's first bytes; filler (`x`) makes up the rest, up to `tail`. */
  head?: string;
  /** The body's last bytes. */
  tail?: string;
  contentType?: string;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** The figure: a 300 MB 500 answer (up to 4 attempts) took a worker's RSS from 97 to 426 MB. */
export const HUGE_BODY = 300 * 2 ** 20;
/** Bytes a server gets out to a client that stopped reading: the kernel's socket buffers take a few MB. */
export const SENT_BOUND = 32 * 2 ** 20;
/** What a bounded read may add to the process's RSS, allocator noise included; reading it whole adds GBs. */
export const RSS_BOUND = 64 * 2 ** 20;

/**
 * A server that answers a body far larger than a client should read, without holding it: the body
 * is written chunk by chunk as the socket drains, so the test's memory stays flat whatever `size`
 * is, and the bytes sent before the client hung up are counted.
 */
export async function startHugeBodyServer(options: HugeBodyOptions): Promise<HugeBodyServer> {
  const answers: HugeAnswer[] = [];
  const waiting = new Map<number, (answer: HugeAnswer) => void>();
  let requests = 0;
  const server: Server = createServer((request, response) => {
    const index = requests++;
    request.resume();
    const head = Buffer.from(options.head ?? '', 'utf8');
    const tail = Buffer.from(options.tail ?? '', 'utf8');
    const tailStart = options.size - tail.length;
    response.writeHead(options.status, {
      'content-type': options.contentType ?? 'application/json',
      'content-length': String(options.size),
    });
    let sent = 0;
    let ended = false;
    const finish = (cutShort: boolean) => {
      if (ended) return;
      ended = true;
      const answer = { sent, cutShort };
      answers[index] = answer;
      waiting.get(index)?.(answer);
    };
    const write = () => {
      while (sent < options.size) {
        const piece =
          sent < head.length
            ? head.subarray(sent)
            : sent >= tailStart
              ? tail.subarray(sent - tailStart)
              : CHUNK.subarray(0, Math.min(CHUNK.length, tailStart - sent));
        sent += piece.length;
        if (!response.write(piece)) {
          response.once('drain', write);
          return;
        }
      }
      response.end(() => finish(false));
    };
    response.on('close', () => finish(sent < options.size || !response.writableFinished));
    write();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answers,
    answer: (index) =>
      answers[index]
        ? Promise.resolve(answers[index] as HugeAnswer)
        : new Promise((resolve) => waiting.set(index, resolve)),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
