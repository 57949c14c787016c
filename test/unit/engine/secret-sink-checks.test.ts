import { describe, expect, it } from 'vitest';
import { directoryRefusal, fileRefusal } from '../../../src/engine/node-secret-sinks.js';
import { sinkProgramRefusal } from '../../../src/engine/sink-commands.js';

const PATH = '/var/lib/nightshift/secrets/app.jsonl';
const ME = 1000;

describe("a file sink's directory", () => {
  it("is this user's or root's, and only its owner writes to it", () => {
    expect(directoryRefusal(PATH, { uid: ME, mode: 0o40700 }, ME)).toBeUndefined();
    expect(directoryRefusal(PATH, { uid: 0, mode: 0o40755 }, ME)).toBeUndefined();
  });

  it('is refused when another user owns it, naming the path, the directory and both uids', () => {
    expect(directoryRefusal(PATH, { uid: 1001, mode: 0o40700 }, ME)).toBe(
      `secret sink ${PATH}: refused: its directory /var/lib/nightshift/secrets belongs to uid 1001, not to this process's user (uid 1000) or root, so its owner could replace the file`,
    );
  });

  it('is refused when group or others may write to it, sticky or not', () => {
    for (const mode of [0o40770, 0o40702, 0o41777])
      expect(directoryRefusal(PATH, { uid: ME, mode }, ME)).toContain(
        `its directory /var/lib/nightshift/secrets has mode ${(mode & 0o7777).toString(8).padStart(4, '0')}, so group or others may create, replace or remove files in it`,
      );
  });
});

describe('a file sink’s file', () => {
  it("is this user's and private to it", () => {
    expect(fileRefusal(PATH, { uid: ME, mode: 0o100600 }, ME)).toBeUndefined();
  });

  it('is refused when another user owns it, root included, naming both uids', () => {
    for (const uid of [1001, 0])
      expect(fileRefusal(PATH, { uid, mode: 0o100600 }, ME)).toBe(
        `secret sink ${PATH}: refused: the file belongs to uid ${uid}, not to this process's user (uid 1000)`,
      );
  });

  it('is refused when group or others have any permission on it', () => {
    expect(fileRefusal(PATH, { uid: ME, mode: 0o100640 }, ME)).toContain('the file has mode 0640');
  });
});

describe('NIGHTSHIFT_SINK_COMMANDS', () => {
  it('lets any program run when unset, none when empty, and only a listed absolute path as written otherwise', () => {
    expect(sinkProgramRefusal('/bin/sh', undefined)).toBeUndefined();
    expect(sinkProgramRefusal('/usr/local/bin/store-secret', new Set())).toBe(
      'no sink command may run here (NIGHTSHIFT_SINK_COMMANDS=none)',
    );
    const allowed = new Set(['/usr/local/bin/store-secret']);
    expect(sinkProgramRefusal('/usr/local/bin/store-secret', allowed)).toBeUndefined();
    for (const program of ['store-secret', '/usr/local/bin/../bin/store-secret', '/bin/sh'])
      expect(sinkProgramRefusal(program, allowed), program).toContain('is not one of the programs');
  });
});
