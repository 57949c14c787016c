import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorBody, SimError, successBody } from '../../../src/sim/envelope.js';
import { RequestLog } from '../../../src/sim/request-log.js';
import { fieldNameOf, parseBody } from '../../../src/sim/validation.js';

const Body = z.object({
  username: z.string().min(1),
  password: z.string().min(8),
  types: z.array(z.enum(['api', 'audit'])).optional(),
  groups: z.object({ ng_16: z.object({ max_size: z.number().int() }) }).optional(),
});

function failure(body: unknown): SimError {
  try {
    parseBody(Body, body);
  } catch (error) {
    return error as SimError;
  }
  throw new Error('the body was accepted');
}

describe('parseBody', () => {
  it('names a missing field and says it is required', () => {
    expect(failure({ password: 'long-enough' })).toMatchObject({
      type: 'Bad-Request',
      fieldName: 'username',
      reason: 'username is required',
      status: 400,
    });
  });

  it('reports a short password without echoing it', () => {
    const error = failure({ username: 'u', password: 'secret1' });
    expect(error.fieldName).toBe('password');
    expect(error.reason).toBe('password must be at least 8 characters long');
    expect(error.reason).not.toContain('secret1');
  });

  it('names an array member by its field, giving the position in the reason', () => {
    const error = failure({ username: 'u', password: 'long-enough', types: ['api', 'kernel'] });
    expect(error.fieldName).toBe('types');
    expect(error.reason).toBe('types[1] "kernel" is not one of: api, audit');
  });

  it('names a nested member by its dotted path', () => {
    const error = failure({ username: 'u', password: 'long-enough', groups: { ng_16: { max_size: 1.5 } } });
    expect(error).toMatchObject({
      fieldName: 'groups.ng_16.max_size',
      reason: 'groups.ng_16.max_size must be an integer',
    });
  });

  it('names the body when it is not an object', () => {
    expect(failure([1, 2])).toMatchObject({ fieldName: 'body' });
    expect(fieldNameOf([])).toBe('body');
  });

  it('treats a missing body as an empty object', () => {
    expect(failure(undefined).fieldName).toBe('username');
  });
});

describe('envelopes', () => {
  it('wraps a serialised Result, string or Buffer, in the success envelope', () => {
    const text = successBody('r-1', 'ok', '"done"');
    expect(JSON.parse(text as string)).toEqual({
      Error: false,
      ErrorDetails: [],
      Message: 'ok',
      RequestID: 'r-1',
      Result: 'done',
    });
    const buffer = successBody('r-2', 'ok', Buffer.from('[1]'));
    expect(JSON.parse(buffer.toString())).toMatchObject({ RequestID: 'r-2', Result: [1] });
  });

  it('leaves Result out of the error envelope', () => {
    const body = JSON.parse(errorBody('r-3', new SimError('Not-Found', 'workgroupID', 'gone')));
    expect(body).toEqual({
      Error: true,
      ErrorDetails: [{ FieldName: 'workgroupID', Reason: 'gone', Type: 'Not-Found' }],
      Message: 'gone',
      RequestID: 'r-3',
    });
  });
});

describe('RequestLog', () => {
  const entry = (path: string) => ({
    method: 'GET',
    path,
    operation: null,
    status: 200,
    requestId: path,
    auth: 'none' as const,
    fault: null,
    delayMs: 0,
  });

  it('keeps only the last `limit` entries, oldest first', () => {
    const log = new RequestLog(3);
    for (const path of ['/a', '/b', '/c', '/d', '/e']) log.add(entry(path), 0);
    expect(log.since().map((e) => [e.seq, e.path])).toEqual([
      [3, '/c'],
      [4, '/d'],
      [5, '/e'],
    ]);
    expect(log.since(4).map((e) => e.path)).toEqual(['/e']);
  });

  it('keeps counting across clear() so pollers never see a sequence number twice', () => {
    const log = new RequestLog(10);
    log.add(entry('/a'), 0);
    log.clear();
    log.add(entry('/b'), 0);
    expect(log.since()).toEqual([
      expect.objectContaining({ seq: 2, path: '/b', time: '1970-01-01T00:00:00.000Z' }),
    ]);
  });
});
