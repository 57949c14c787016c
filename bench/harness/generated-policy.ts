/**
 * Generated policies for the validation and memory benchmarks (bench/policy-validate.ts,
 * bench/memory.ts) and the tests that hold both YAML readers to the same values on them.
 */

const SCHEDULES = ['0 20 * * 1-5', '30 7 * * 1-5', '*/15 * * * *', '0 3 * * 0', '0 */2 * * *', '15 2 1 * *'];
/** Daily and weekly schedules only: no tick comes due while a scheduler runs the policy for a while. */
const QUIET_SCHEDULES = [
  '0 20 * * 1-5',
  '30 7 * * 1-5',
  '0 3 * * 0',
  '15 2 1 * *',
  '45 22 * * 5',
  '0 6 * * 6',
];
const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'UTC'];

/**
 * A policy shaped like a large real one: named and inline targets, overrides on some jobs. With
 * `minimal`, every job has only its schedule, action and named target: the least text per job.
 * With `quiet`, only daily and weekly schedules and no notification sink (a scheduler measured
 * for memory neither fires nor needs a webhook's variable).
 */
export function generatePolicy(jobCount: number, minimal = false, { quiet = false } = {}): string {
  const schedules = quiet ? QUIET_SCHEDULES : SCHEDULES;
  const lines = [
    'version: 1',
    'defaults:',
    '  timezone: Europe/Berlin',
    '  retry: { attempts: 5, backoff: 10s }',
    '  concurrency: 16',
    'calendars:',
    '  holidays: [2026-12-24, 2026-12-25, 2026-12-31]',
    ...(quiet
      ? []
      : [
          'notifications:',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
          '  ops: { url: "${OPS_WEBHOOK}", format: slack }',
        ]),
    'targets:',
  ];
  for (let team = 0; team < 50; team += 1) {
    lines.push(
      `  team-${team}:`,
      `    workgroups: ["team-${team}-*"]`,
      `    exclude: ["team-${team}-core/*"]`,
    );
  }
  lines.push('jobs:');
  for (let index = 0; index < jobCount; index += 1) {
    const action = index % 2 === 0 ? 'pause' : 'resume';
    lines.push(`  ${action}-${index}:`);
    if (!minimal) lines.push(`    description: ${action} team ${index % 50} workspaces`);
    lines.push(`    schedule: "${schedules[index % schedules.length]}"`, `    action: ${action}`);
    if (minimal || index % 10 !== 0) lines.push(`    target: team-${index % 50}`);
    else lines.push(`    target: { workgroups: ["wg-${index}"], workspaces: ["ws-*"] }`);
    if (minimal) continue;
    if (index % 3 === 0) lines.push(`    timezone: ${ZONES[index % ZONES.length]}`);
    if (index % 4 === 0)
      lines.push('    retry: { attempts: 3 }', '    timeout: 15m', '    maxTargets: "25%"');
    if (index % 5 === 0) lines.push('    skip: [holidays]', ...(quiet ? [] : ['    notify: [ops]']));
  }
  return `${lines.join('\n')}\n`;
}
