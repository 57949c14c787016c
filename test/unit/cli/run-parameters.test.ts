// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests pass the policy's own ${VAR} syntax on as typed
import { describe, expect, it } from 'vitest';
import { runParameters } from '../../../src/cli/commands/run.js';
import { UsageError } from '../../../src/cli/exit.js';

describe('run --with key=value, as given on the command line', () => {
  it('keeps each value as typed, past its first "=", a ${VAR} unresolved', () => {
    const reference = '${DRILL_BACKUP_ID}';
    expect(
      runParameters(['backupId=bk-1', 'expect={ vertices: 5 }', 'query=a=b', `token=${reference}`, 'note=']),
    ).toEqual({
      backupId: 'bk-1',
      expect: '{ vertices: 5 }',
      query: 'a=b',
      token: reference,
      note: '',
    });
  });

  it.each([
    ['backupId', '--with backupId: expected key=value'],
    ['=bk-1', '"" is not a parameter\'s name'],
    ['expect.vertices=5', '"expect.vertices" is not a parameter\'s name'],
    ['__proto__=x', '"__proto__" is not a parameter\'s name'],
  ])('refuses %s as bad usage (exit 2), saying what is wrong', (given, message) => {
    expect(() => runParameters([given])).toThrow(UsageError);
    expect(() => runParameters([given])).toThrow(message);
  });

  it('refuses a key given twice rather than pick one', () => {
    expect(() => runParameters(['backupId=bk-1', 'backupId=bk-2'])).toThrow('--with backupId: given twice');
  });
});
