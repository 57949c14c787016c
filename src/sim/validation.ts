import type { z } from 'zod';
import { badRequest } from './envelope.js';

/** `node_group_config.ng_16.max_size`: the offending member, array positions left out. */
export function fieldNameOf(path: readonly PropertyKey[]): string {
  const named = path.filter((key) => typeof key !== 'number').map(String);
  return named.length === 0 ? 'body' : named.join('.');
}

/** The full path for a human, positions included: `cluster_enabled_log_types[1]`. */
function displayPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path)
    out += typeof key === 'number' ? `[${key}]` : `${out === '' ? '' : '.'}${String(key)}`;
  return out === '' ? 'body' : out;
}

/** A reason that never echoes a value the caller sent, except enumeration values. */
function reasonFor(issue: z.core.$ZodIssue): string {
  const where = displayPath(issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `${where} is required`;
      return `${where} must be ${issue.expected === 'int' ? 'an integer' : `of type ${issue.expected}`}`;
    case 'too_small':
      if (issue.origin === 'string') return `${where} must be at least ${issue.minimum} characters long`;
      if (issue.origin === 'array') return `${where} must have at least ${issue.minimum} items`;
      return `${where} must be at least ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `${where} must be at most ${issue.maximum} characters long`;
      return `${where} must be at most ${issue.maximum}`;
    case 'invalid_value':
      return `${where} ${JSON.stringify(issue.input)} is not one of: ${issue.values.map(String).join(', ')}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

/** Parses a request body; the first fault becomes a 400 Bad-Request naming its field. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body ?? {}, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw badRequest('body', 'the request body is invalid');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    throw badRequest(
      fieldNameOf([...issue.path, key]),
      `unknown field "${displayPath([...issue.path, key])}"`,
    );
  }
  throw badRequest(fieldNameOf(issue.path), reasonFor(issue));
}
