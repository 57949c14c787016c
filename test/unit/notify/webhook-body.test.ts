import { afterEach, describe, expect, it } from 'vitest';
import { postWebhook, WEBHOOK_ERROR_BODY_BYTES, WebhookError } from '../../../src/notify/webhook.js';
import {
  HUGE_BODY as HUGE,
  type HugeBodyServer,
  RSS_BOUND,
  SENT_BOUND,
  startHugeBodyServer,
} from '../../helpers/huge-body-server.js';
import { rejectionOf } from '../../helpers/rejection.js';

let server: HugeBodyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const rejection = (promise: Promise<unknown>) => rejectionOf(promise, WebhookError);

describe('a webhook error answer is read to WEBHOOK_ERROR_BODY_BYTES only', () => {
  it('a 300 MB 500, four attempts: each cut short after its first kilobytes, the error naming the sink, the status and its first words', async () => {
    server = await startHugeBodyServer({
      status: 500,
      size: HUGE,
      head: 'upstream exploded ',
      contentType: 'text/plain',
    });
    const sink = { name: 'ops', url: `${server.url}/hooks/T000/s3cr3t`, timeoutMs: 20_000 };
    const before = process.memoryUsage().rss;
    const error = await rejection(postWebhook(sink, { text: 'run failed' }, { attempts: 4, backoffMs: 1 }));
    const grown = process.memoryUsage().rss - before;
    expect(error.message).toMatch(/^webhook "ops": 500 upstream exploded x+… \(4 attempts\)$/);
    expect(error.code).toBe('WEBHOOK_STATUS');
    const answers = await Promise.all([0, 1, 2, 3].map((index) => (server as HugeBodyServer).answer(index)));
    for (const answer of answers) {
      expect(answer.cutShort).toBe(true);
      expect(answer.sent).toBeLessThan(SENT_BOUND);
    }
    expect(grown).toBeLessThan(RSS_BOUND);
  });

  it('never shows part of the webhook URL cut in two at the end of what was read', async () => {
    const path = '/hooks/T000/B000/0123456789abcdef';
    // blanks collapse in a reason, so the path's first half (where Slack keeps the secret) would land in it
    server = await startHugeBodyServer({
      status: 400,
      size: HUGE,
      head: `${' '.repeat(WEBHOOK_ERROR_BODY_BYTES - 20)}${path}`,
      contentType: 'text/plain',
    });
    const sink = { name: 'ops', url: `${server.url}${path}`, timeoutMs: 20_000 };
    const error = await rejection(postWebhook(sink, {}, { attempts: 1 }));
    expect(error.message).toBe('webhook "ops": 400 no body (1 attempt)');
  });
});
