// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a parameter may hold the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { parametersFromForm, runNowForm } from '../../../src/ops/console/data/run-now.js';

describe("the console's run-now form", () => {
  it('reads one key=value a line, as typed, ignoring blank lines and the spaces around keys and values', () => {
    expect(
      parametersFromForm(
        'backupId=bk-1234\r\n\n  waitReady = 10m  \nexpect={ vertices: 5 }\ntoken=${DRILL_TOKEN}\nnote=a=b',
      ),
    ).toEqual({
      backupId: 'bk-1234',
      waitReady: '10m',
      expect: '{ vertices: 5 }',
      token: '${DRILL_TOKEN}',
      note: 'a=b',
    });
    expect(parametersFromForm('')).toEqual({});
    expect(parametersFromForm('\n  \n')).toEqual({});
  });

  it('refuses a line without "=", naming the line and showing the form expected', () => {
    expect(parametersFromForm('backupId=bk-1\nwaitReady 10m')).toBe(
      'parameters, line 2 "waitReady 10m": expected key=value, e.g. backupId=bk-1234',
    );
  });

  it("refuses a key that is not a parameter's name, saying what one is", () => {
    expect(parametersFromForm('with.backupId=bk-1')).toMatch(
      /^parameters, line 1 "with\.backupId=bk-1": "with\.backupId" is not a parameter's name \(a key of the job's "with:"/,
    );
    expect(parametersFromForm('=bk-1')).toMatch(/^parameters, line 1 "=bk-1": "" is not a parameter's name/);
  });

  it('refuses a key given twice, naming both lines', () => {
    expect(parametersFromForm('backupId=bk-1\n\nbackupId=bk-2')).toBe(
      'parameters, line 3: backupId is given twice (lines 1 and 3)',
    );
  });

  it('refuses more parameters than a job takes', () => {
    const lines = Array.from({ length: 51 }, (_, i) => `p${i}=1`).join('\n');
    expect(parametersFromForm(lines)).toBe('parameters, line 51: more than 50 parameters');
  });

  it('reads the form: parameters, a trimmed reason, and dry run only when ticked', () => {
    expect(runNowForm({ with: 'backupId=bk-1', reason: '  drill  ', dryRun: 'on' })).toEqual({
      with: 'backupId=bk-1',
      reason: 'drill',
      dryRun: true,
    });
    expect(runNowForm({ csrf: 'x' })).toEqual({ with: '', reason: '', dryRun: false });
    expect(runNowForm(undefined)).toEqual({ with: '', reason: '', dryRun: false });
  });
});
