import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { sharedName } from '../../../src/policy/glob-language.js';
import { checkPolicy, formatProblem } from '../../../src/policy/index.js';
import { testEnv, testRegistry } from '../../fixtures/policies/test-registry.js';

/** Every string of `alphabet` up to `length` characters long, shortest first. */
function strings(alphabet: readonly string[], length: number): string[] {
  const all: string[] = [];
  let level = [''];
  for (let size = 1; size <= length; size += 1) {
    level = level.flatMap((prefix) => alphabet.map((char) => prefix + char));
    all.push(...level);
  }
  return all;
}

describe('sharedName: two globs share a name exactly when some name matches both', () => {
  it.each([
    ['dev-a*', 'dev-?lpha', 'dev-alpha'],
    ['dev-*', 'dev-core', 'dev-core'],
    ['*-core', 'dev-*', 'dev-core'],
    ['dev-{alpha,beta}', 'dev-b*', 'dev-beta'],
    ['team-[0-4]*', 'team-3?', 'team-3a'],
  ])('"%s" and "%s" share "%s"', (a, b, name) => {
    expect(sharedName([{ globs: [a] }, { globs: [b] }])).toBe(name);
  });

  it.each([
    ['dev-a*', 'dev-b*'],
    ['dev-be*', 'dev-?lpha'],
    ['team-[0-4]*', 'team-[5-9]*'],
    ['dev-{alpha,beta}', 'dev-gamma'],
    ['?', '??'],
  ])('"%s" and "%s" share no name', (a, b) => {
    expect(sharedName([{ globs: [a] }, { globs: [b] }])).toBeUndefined();
  });

  it('takes a negated part as every name none of its globs matches', () => {
    expect(sharedName([{ globs: ['dev-*'] }, { globs: ['dev-c*', 'dev-a'], negated: true }])).toBe('dev-');
    expect(sharedName([{ globs: ['dev-core'] }, { globs: ['dev-co*'], negated: true }])).toBeUndefined();
  });

  it('agrees with picomatch on every name of a small alphabet, for random globs', () => {
    const piece = fc.constantFrom('a', 'b', 'c', '*', '?', '[ab]', '[a-b]', '{a,b}', '**');
    const glob = fc.array(piece, { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(''));
    // two globs of at most four single characters each that share a name share one of at most eight
    const names = strings(['a', 'b', 'c'], 8);
    fc.assert(
      fc.property(glob, glob, (a, b) => {
        const [matchA, matchB] = [picomatch(a, { dot: true }), picomatch(b, { dot: true })];
        const found = sharedName([{ globs: [a] }, { globs: [b] }]);
        const common = names.find((name) => matchA(name) && matchB(name));
        if (typeof found === 'string') expect(matchA(found) && matchB(found)).toBe(true);
        if (common !== undefined) expect((found as string).length).toBeLessThanOrEqual(common.length);
        // picomatch also reads "[ab]" as the name "[ab]" itself: a name outside the alphabet
        else expect(found === undefined || /[^abc]/.test(found)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

function overlaps(windows: string): string[] {
  const text = `version: 1\nwindows:\n${windows}`;
  return checkPolicy(text, 'w.yaml', { registry: testRegistry, env: testEnv }).problems.map(formatProblem);
}

describe('validate: windows whose targets share a workspace', () => {
  it('refuses "dev-a*" beside "dev-?lpha", naming a workspace both would cover', () => {
    expect(
      overlaps(`  a: { target: { workgroups: ["dev-a*"] }, uptime: "Mon-Fri 07:30-19:30" }
  b: { target: { workgroups: ["dev-?lpha"] }, uptime: "Mon-Fri 09:00-17:00" }
`),
    ).toEqual([
      'w.yaml:4:16: windows.b.target: windows "a" and "b" both cover workspaces such as "dev-alpha/a" (workgroups "dev-a*" and "dev-?lpha" both match "dev-alpha"); a workspace can be under one window only: narrow a target or add exclude',
    ]);
  });

  it('accepts targets that share workgroups when excludes leave the shared workspaces to one of them', () => {
    expect(
      overlaps(`  office: { target: { workgroups: ["dev-*"], exclude: ["*/ci-*", "dev-core"] }, uptime: "Mon-Fri 07:30-19:30" }
  ci: { target: { workgroups: ["dev-*"], workspaces: ["ci-*"] }, uptime: "Mon-Sun 06:00-22:00" }
  core: { target: { workgroups: ["dev-core"], workspaces: ["kg"] }, uptime: "Mon-Sun 00:00-24:00", resume: none }
`),
    ).toEqual([]);
  });

  it('refuses targets that an exclude separates only in part', () => {
    const problems =
      overlaps(`  office: { target: { workgroups: ["dev-*"], exclude: ["dev-core/ci-*"] }, uptime: "Mon-Fri 07:30-19:30" }
  ci: { target: { workgroups: ["dev-co*"], workspaces: ["ci-*"] }, uptime: "Mon-Sun 06:00-22:00" }
`);
    expect(problems).toEqual([
      'w.yaml:4:17: windows.ci.target: windows "office" and "ci" both cover workspaces such as "dev-co/ci-" (workgroups "dev-*" and "dev-co*" both match "dev-co"); a workspace can be under one window only: narrow a target or add exclude',
    ]);
  });
});
