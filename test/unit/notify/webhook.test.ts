import { describe, expect, it } from 'vitest';
import { isRetryableStatus, scrubUrl, WebhookError } from '../../../src/notify/webhook.js';

const URL_WITH_SECRET = 'https://hooks.example.com/services/T000/B000/s3cr3t?token=abc123';

describe('scrubUrl', () => {
  it('removes the URL, its path and its query from text a server or a socket produced', () => {
    const text = `POST ${URL_WITH_SECRET} failed; path /services/T000/B000/s3cr3t?token=abc123, query ?token=abc123`;
    const scrubbed = scrubUrl(text, URL_WITH_SECRET);
    expect(scrubbed).not.toContain('s3cr3t');
    expect(scrubbed).not.toContain('abc123');
    expect(scrubbed).toBe('POST [webhook] failed; path [webhook], query [webhook]');
  });

  it('leaves text without the URL alone', () => {
    expect(scrubUrl('connect ECONNREFUSED 127.0.0.1:9', URL_WITH_SECRET)).toBe(
      'connect ECONNREFUSED 127.0.0.1:9',
    );
  });
});

describe('WebhookError', () => {
  it('names the sink, the status and the attempts, never a URL', () => {
    const error = new WebhookError('WEBHOOK_STATUS', 'ops', {
      attempts: 4,
      status: 503,
      reason: 'overloaded',
      retryable: true,
    });
    expect(error.message).toBe('webhook "ops": 503 overloaded (4 attempts)');
    expect(error).toMatchObject({ code: 'WEBHOOK_STATUS', sink: 'ops', attempts: 4, status: 503 });
  });
});

describe('isRetryableStatus', () => {
  it('retries 5xx, 429 and 408, not other 4xx', () => {
    expect([500, 502, 503, 429, 408].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 410].some(isRetryableStatus)).toBe(false);
  });
});
