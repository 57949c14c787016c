import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { NightshiftError } from '../errors/index.js';
import { type SimState, SimStateSchema } from './state.js';

/** A state that failed to load; the message names the source and the path of every fault. */
export class StateError extends NightshiftError {
  override name = 'StateError';
  readonly code = 'NS_SIM_STATE_INVALID';
}

/** `workspaces[3].database_id`: the path as a reader of the JSON file would look for it. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(root)' : out;
}

function describe(source: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.slice(0, 10).map((issue) => `${source}: ${formatPath(issue.path)}: ${issue.message}`);
  if (issues.length > 10) lines.push(`${source}: … and ${issues.length - 10} more`);
  return lines.join('\n');
}

/** Validates a state from any source (a file, an admin request); `source` prefixes each message. */
export function parseState(input: unknown, source: string): SimState {
  const parsed = SimStateSchema.safeParse(input);
  if (!parsed.success) throw new StateError(describe(source, parsed.error.issues));
  return parsed.data;
}

export async function loadStateFile(path: string): Promise<SimState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new StateError(`${path}: cannot read the state file (${(error as NodeJS.ErrnoException).code})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StateError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  return parseState(json, path);
}
