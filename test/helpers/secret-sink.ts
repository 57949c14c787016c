import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A record a secret sink received, as a test reads it back. */
export interface SinkLine {
  time: string;
  job: string;
  runId: string;
  workgroupId: string;
  workspaceId: string;
  username: string;
  secretId: string;
  state: 'pending' | 'current' | 'rejected';
  password?: string;
  /** The API's error (`rejected` only). */
  error?: string;
}

/** What the recorder command of {@link SinkFolder.recorder} wrote for one delivery. */
export interface Recorded {
  /** The record as it arrived on stdin (JSON text). */
  stdin: string;
  /** Its NIGHTSHIFT_SECRET_* variables. */
  env: Record<string, string>;
}

/** The lines of a JSON-lines file, parsed. */
export function jsonLines<T = Record<string, unknown>>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);
}

/** The records of a file sink. */
export function sinkLines(path: string): SinkLine[] {
  return jsonLines<SinkLine>(path);
}

export interface SinkFolder {
  readonly dir: string;
  /** A path in the folder that no test has used yet: `<stem>-<n><extension>`. */
  fresh(stem?: string, extension?: string): string;
  /**
   * A sink command (a node script) that appends what it got on stdin and its NIGHTSHIFT_SECRET_*
   * variables to `out`, one {@link Recorded} line per delivery.
   */
  recorder(): { command: string[]; out: string };
}

/** A temporary folder for a test file's sink files and scripts, removed after its last test. */
export function useSinkFolder(prefix: string): SinkFolder {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const fresh = (stem = 'secrets', extension = '.jsonl') => join(dir, `${stem}-${++files}${extension}`);
  return {
    dir,
    fresh,
    recorder() {
      const script = fresh('recorder', '.mjs');
      const out = fresh('recorded');
      writeFileSync(
        script,
        `import { appendFileSync } from 'node:fs';
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('NIGHTSHIFT_SECRET_')));
  appendFileSync(process.argv[2], JSON.stringify({ stdin: Buffer.concat(chunks).toString('utf8'), env }) + '\\n');
});
`,
      );
      return { command: [process.execPath, script, out], out };
    },
  };
}
