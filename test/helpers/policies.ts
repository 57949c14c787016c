// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
/** A dry-run pause of every workgroup each second (job `per-second`), with `catchUp` and any `extra` lines. */
export function perSecondPolicy(catchUp: string, extra = ''): string {
  return `version: 1
jobs:
  per-second:
    schedule: "* * * * * *"
    action: pause
    target: { workgroups: ["*"] }
    dryRun: true
    catchUp: ${catchUp}
${extra}`;
}

/** Two dry-run jobs: a pause each second and a resume every other second. */
export const TWO_TICKING_JOBS = `version: 1
targets:
  all: { workgroups: ["*"] }
jobs:
  every-second:
    schedule: "* * * * * *"
    action: pause
    target: all
    dryRun: true
  every-other-second:
    schedule: "*/2 * * * * *"
    action: resume
    target: all
    dryRun: true
`;

/** A pause of every workgroup (job `slow-pause`), one workspace at a time: a run as long as its pauses together. */
export const ONE_AT_A_TIME_PAUSE = `version: 1
jobs:
  slow-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 1
`;

/**
 * A restore drill of ops/drill (job `drill`) whose backup comes from a variable no process of the
 * tests sets: each run names it as a parameter (`run --with`, the console's run now).
 */
export const DRILL_BY_PARAMETER = `version: 1
jobs:
  drill:
    schedule: "0 6 * * 6"
    action: restore-drill
    timeout: 5m
    with:
      workgroup: ops
      workspace: drill
      backupId: "\${DRILL_BACKUP_ID}"
      waitReady: 1m
      afterwards: leave
`;
