/**
 * A policy that is an alias bomb: `anchored` scalars in one anchored flow list, then a list of
 * `aliases` aliases of it, four bytes an entry and an alias (20,000 and 2,500 make 90 kB). Copied
 * out, it would hold `anchored × aliases` values.
 */
export function aliasBomb(anchored: number, aliases: number): string {
  return [
    'version: 1',
    'jobs: {}',
    `bomb: &a [${Array(anchored).fill('ab').join(', ')}]`,
    `boom: [${Array(aliases).fill('*a').join(', ')}]`,
    '',
  ].join('\n');
}
