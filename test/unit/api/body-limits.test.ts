import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, ApiError, ERROR_BODY_BYTES } from '../../../src/api/index.js';
import {
  HUGE_BODY as HUGE,
  type HugeBodyServer,
  RSS_BOUND,
  SENT_BOUND,
  startHugeBodyServer,
} from '../../helpers/huge-body-server.js';
import { rejectionOf } from '../../helpers/rejection.js';

const MADE_UP_CREDENTIAL = 'fake-credential-cut-in-two';

let server: HugeBodyServer | undefined;
const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await server?.close();
  server = undefined;
});

function client(url: string, extra: { maxBodyBytes?: number } = {}): ApiClient {
  const made = new ApiClient({ baseUrl: url, apiKey: MADE_UP_CREDENTIAL, timeoutMs: 20_000, ...extra });
  clients.push(made);
  return made;
}

const rejection = (promise: Promise<unknown>) => rejectionOf(promise, ApiError);

/** The call's error, how much the server sent, and how much the process's memory grew meanwhile. */
async function measured(call: () => Promise<unknown>) {
  const before = process.memoryUsage().rss;
  const error = await rejection(call());
  const grown = process.memoryUsage().rss - before;
  const answer = await (server as HugeBodyServer).answer(0);
  return { error, grown, answer };
}

describe('an error answer is read to ERROR_BODY_BYTES only, and still names what failed', () => {
  it('a 300 MB 500 envelope: the operation, 500, its Type and RequestID, with the rest never read', async () => {
    server = await startHugeBodyServer({
      status: 500,
      size: HUGE,
      head: '{"Error":true,"RequestID":"req-huge-1","ErrorDetails":[{"FieldName":"","Reason":"overloaded","Type":"Internal-Error"}],"Message":"',
    });
    const url = server.url;
    const { error, grown, answer } = await measured(() => client(url).listWorkgroups());
    expect(error.message).toMatch(
      /^listWorkgroups GET \/controller\/v4\/v2\/workgroups → 500 Internal-Error \(RequestID req-huge-1\): the body is larger than 16384 bytes; read no further: "\{"Error":true,/,
    );
    expect(error).toMatchObject({
      status: 500,
      type: 'Internal-Error',
      requestId: 'req-huge-1',
      retryable: true,
    });
    expect(answer.cutShort).toBe(true);
    expect(answer.sent).toBeLessThan(SENT_BOUND);
    expect(grown).toBeLessThan(RSS_BOUND);
  });

  it("an envelope's Type decides retrying even when the body is cut: a 500 saying Bad-Request is not retried", async () => {
    server = await startHugeBodyServer({
      status: 500,
      size: HUGE,
      head: '{"Error":true,"RequestID":"req-huge-2","ErrorDetails":[{"FieldName":"name","Reason":"too long","Type":"Bad-Request"}],"Message":"',
    });
    const error = await rejection(client(server.url).listWorkgroups());
    expect(error).toMatchObject({
      status: 500,
      type: 'Bad-Request',
      requestId: 'req-huge-2',
      retryable: false,
    });
  });

  it('a 300 MB gateway page: 502 and its first words, the Type from the status, no RequestID', async () => {
    server = await startHugeBodyServer({
      status: 502,
      size: HUGE,
      head: '<html><body>Bad gateway ',
      contentType: 'text/html',
    });
    const url = server.url;
    const { error, answer } = await measured(() => client(url).listWorkgroups());
    expect(error.message).toContain(
      '→ 502 Internal-Error: the body is larger than 16384 bytes; read no further: "<html><body>Bad gateway x',
    );
    expect(error.requestId).toBeUndefined();
    expect(answer.cutShort).toBe(true);
  });

  it('never shows part of the API key cut in two at the end of what was read', async () => {
    // blanks collapse in a snippet, so the key's first half would land in it
    server = await startHugeBodyServer({
      status: 500,
      size: HUGE,
      head: `${' '.repeat(ERROR_BODY_BYTES - 8)}${MADE_UP_CREDENTIAL}`,
      contentType: 'text/plain',
    });
    const error = await rejection(client(server.url).listWorkgroups());
    expect(error.message).not.toContain(MADE_UP_CREDENTIAL.slice(0, 8));
    expect(JSON.stringify(error)).not.toContain(MADE_UP_CREDENTIAL.slice(0, 8));
  });
});

describe('a successful answer is read to maxBodyBytes', () => {
  it('one larger fails as Too-Large, not retried, without reading it', async () => {
    server = await startHugeBodyServer({ status: 200, size: HUGE, head: '{"Error":false,"Result":["' });
    const url = server.url;
    const { error, grown, answer } = await measured(() =>
      client(url, { maxBodyBytes: 2 ** 20 }).listWorkgroups(),
    );
    expect(error.message).toBe(
      'listWorkgroups GET /controller/v4/v2/workgroups → 200 Too-Large: the answer is larger than 1048576 bytes (maxBodyBytes); not read further',
    );
    expect(error.retryable).toBe(false);
    expect(answer.cutShort).toBe(true);
    expect(answer.sent).toBeLessThan(SENT_BOUND);
    expect(grown).toBeLessThan(RSS_BOUND);
  });

  it('one within it is read whole, however many chunks it takes', async () => {
    const head =
      '{"Error":false,"RequestID":"req-big","Message":"ok","Result":[{"workgroup_id":"wg-1","name":"';
    const tail = '"}]}';
    // 3 MiB of a name: only a body read to its last byte parses
    server = await startHugeBodyServer({
      status: 200,
      size: head.length + 3 * 2 ** 20 + tail.length,
      head,
      tail,
    });
    const answer = await client(server.url, { maxBodyBytes: 4 * 2 ** 20 }).listWorkgroups();
    expect(answer.requestId).toBe('req-big');
    expect(answer.result[0]?.name).toHaveLength(3 * 2 ** 20);
    expect((await (server as HugeBodyServer).answer(0)).cutShort).toBe(false);
  });
});
