// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { didYouMean, interpolate, parseDuration } from '../../../src/policy/index.js';

describe('durations', () => {
  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1d', 86_400_000],
    ['1d2h3m4s', 93_784_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '15', 'm', '15 m', '1.5h', '30m1h', '1h1h', '10ms', '-5m', '5M'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('interpolation', () => {
  const env = { NAME: 'value', EMPTY: '' };

  it('replaces ${NAME}, marks the result as interpolated and says what each reference became', () => {
    expect(interpolate('a-${NAME}-b-${MISSING:-x}', env)).toEqual({
      ok: true,
      value: 'a-value-b-x',
      interpolated: true,
      reads: [
        { name: 'NAME', value: 'value' },
        { name: 'MISSING', value: 'x' },
      ],
    });
  });

  it('leaves text without references alone', () => {
    expect(interpolate('plain $ text $NAME', env)).toEqual({
      ok: true,
      value: 'plain $ text $NAME',
      interpolated: false,
      reads: [],
    });
  });

  const own = {
    NIGHTSHIFT_API_KEY: 'k-3Wx',
    NIGHTSHIFT_CUSTOM: 'c',
    REDIS_URL: 'redis://:pw@r',
    SINK_FILE: '/run/s',
    USER: 'ops',
    nightshift_ui_token: 't',
  };
  it.each([
    ['NIGHTSHIFT_API_KEY', "is one of nightshift's own settings"],
    ['REDIS_URL', "is one of nightshift's own settings"],
    ['USER', "is one of nightshift's own settings"],
    ['nightshift_ui_token', "is one of nightshift's own settings"],
    ['NIGHTSHIFT_CUSTOM', "is in nightshift's own namespace (NIGHTSHIFT_*)"],
    ['SINK_FILE', "names a secret's file (*_FILE)"],
  ])(
    'refuses nightshift’s own variable %s, set or not, with a default or not, and says how to allow it',
    (name, why) => {
      const message = `environment variable ${name} ${why}, which a policy may not read; to let policies read it, add it to NIGHTSHIFT_POLICY_ENV_ALLOW where nightshift runs`;
      for (const text of [`x-\${${name}}`, `\${${name}:-default}`]) {
        expect(interpolate(text, own)).toEqual({ ok: false, message });
        expect(interpolate(text, {})).toEqual({ ok: false, message });
      }
    },
  );

  it('reads nightshift’s own variable once the installation allows it, by its exact name', () => {
    expect(interpolate('${REDIS_URL}', own, new Set(['REDIS_URL']))).toMatchObject({
      value: 'redis://:pw@r',
    });
    expect(interpolate('${redis_url}', own, new Set(['REDIS_URL']))).toMatchObject({ ok: false });
  });

  it('suggests no variable of nightshift’s own for an unset one', () => {
    expect(interpolate('${REDIS_UR}', own)).toMatchObject({
      message: 'environment variable REDIS_UR is not set (set it, or give a default: "${REDIS_UR:-default}")',
    });
    expect(interpolate('${REDIS_UR}', own, new Set(['REDIS_URL']))).toMatchObject({
      message: expect.stringContaining('did you mean "REDIS_URL"?'),
    });
  });

  it('uses the default when the variable is unset or empty', () => {
    expect(interpolate('${MISSING:-fallback}', env)).toMatchObject({ value: 'fallback' });
    expect(interpolate('${EMPTY:-fallback}', env)).toMatchObject({ value: 'fallback' });
    expect(interpolate('${NAME:-fallback}', env)).toMatchObject({ value: 'value' });
  });

  it('keeps an empty variable without a default as an empty string', () => {
    expect(interpolate('[${EMPTY}]', env)).toMatchObject({ ok: true, value: '[]' });
  });

  it('reads $${ as a literal ${', () => {
    expect(interpolate('$${NAME} and ${NAME}', env)).toMatchObject({ value: '${NAME} and value' });
  });

  it('refuses an unset variable, naming it and how to give a default', () => {
    expect(interpolate('${MISSING}', env)).toEqual({
      ok: false,
      unset: 'MISSING',
      message: 'environment variable MISSING is not set (set it, or give a default: "${MISSING:-default}")',
    });
  });

  it('suggests a set variable with a close name for an unset one, by name only', () => {
    const result = interpolate('${DRILL_BACKUP_IDD}', { DRILL_BACKUP_ID: 'bk-secret-1', OTHER: 'x' });
    expect(result).toEqual({
      ok: false,
      unset: 'DRILL_BACKUP_IDD',
      message:
        'environment variable DRILL_BACKUP_IDD is not set; did you mean "DRILL_BACKUP_ID"? (set it, or give a default: "${DRILL_BACKUP_IDD:-default}")',
    });
  });

  it.each(['${}', '${1A}', '${A-B}', '${A:b}'])('refuses the malformed reference %s', (text) => {
    expect(interpolate(text, env)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^invalid variable reference/),
    });
  });

  it('refuses an unterminated reference', () => {
    expect(interpolate('${NAME', env)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^unterminated/),
    });
  });

  it('never puts a value into a message', () => {
    const result = interpolate('${NAME}${MISSING}', env);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain('value');
  });
});

describe('did you mean', () => {
  it('suggests the closest candidate for a typo', () => {
    expect(didYouMean('schedul', ['schedule', 'action', 'target'])).toBe('schedule');
    expect(didYouMean('taget', ['schedule', 'action', 'target'])).toBe('target');
  });

  it('ignores case', () => {
    expect(didYouMean('DryRun', ['dryRun', 'description'])).toBe('dryRun');
  });

  it('counts two neighbouring letters swapped as one typo, so a short word still gets its suggestion', () => {
    expect(didYouMean('pasue', ['pause', 'resume', 'inventory'])).toBe('pause');
    expect(didYouMean('resmue', ['pause', 'resume'])).toBe('resume');
    expect(didYouMean('uapse', ['pause', 'resume'])).toBeUndefined();
  });

  it('suggests nothing when no candidate is close', () => {
    expect(didYouMean('frobnicate', ['schedule', 'action'])).toBeUndefined();
    expect(didYouMean('x', [])).toBeUndefined();
  });
});
