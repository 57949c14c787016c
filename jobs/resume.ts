import { z } from 'zod';
import type { ActionSpec } from '../src/policy/index.js';

/** Resumes paused workspaces, typically before office hours after a nightly `pause`. */
export const resume = {
  name: 'resume',
  description: 'Resume the selected workspaces.',
  destructive: false,
  scope: 'workspace',
  params: z.strictObject({}),
  example: `version: 1
targets:
  dev:
    workgroups: ["dev-*"]
    exclude: ["dev-core/*"]
jobs:
  morning-resume:
    description: Resume dev workspaces before office hours
    schedule: "30 7 * * 1-5"
    timezone: Europe/Berlin
    action: resume
    target: dev
`,
} as const satisfies ActionSpec;
