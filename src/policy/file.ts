import { isUtf8 } from 'node:buffer';
import { readFile, stat } from 'node:fs/promises';
import type { PolicyProblem } from './errors.js';

/** A policy file larger than this is refused before it is parsed: 5 MB. */
export const MAX_POLICY_BYTES = 5 * 1024 * 1024;

/** The text of a policy file, or why it cannot be one: unreadable, too large, not UTF-8 text (at 1:1). */
export async function readPolicyText(path: string): Promise<string | PolicyProblem> {
  let bytes: Buffer;
  try {
    // refused before it is read: a file given by mistake may be any size
    const tooLarge = sizeProblem(path, (await stat(path)).size);
    if (tooLarge) return tooLarge;
    bytes = await readFile(path);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { file: path, line: 1, col: 1, message: `cannot read the policy file: ${reason}` };
  }
  const nul = bytes.includes(0);
  if (nul || !isUtf8(bytes)) {
    const bom = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
    const what = bom ? 'is UTF-16 text' : nul ? 'is not text (it holds NUL bytes)' : 'is not UTF-8 text';
    const message = `the file ${what}: a policy is a YAML file in UTF-8${bom ? '; save it as UTF-8' : ''}`;
    return { file: path, line: 1, col: 1, message };
  }
  return bytes.toString('utf8');
}

/** A problem at 1:1 if a policy of this many bytes is too large. */
export function sizeProblem(file: string, bytes: number): PolicyProblem | undefined {
  if (bytes <= MAX_POLICY_BYTES) return undefined;
  const message = `the policy file is ${bytes} bytes, over the limit of 5 MB (${MAX_POLICY_BYTES} bytes)`;
  return { file, line: 1, col: 1, message };
}
