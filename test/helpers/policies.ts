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
