import { z } from 'zod';
import type { ActionSpec } from '../src/policy/index.js';

/** Pauses running workspaces so they stop costing compute; `resume` brings them back. */
export const pause = {
  name: 'pause',
  description: 'Pause the selected workspaces (stops compute; data and settings stay).',
  destructive: false,
  scope: 'workspace',
  params: z.strictObject({}),
  example: `version: 1
targets:
  dev:
    workgroups: ["dev-*"]
    exclude: ["dev-core/*"]
jobs:
  nightly-pause:
    description: Pause dev workspaces after office hours
    schedule: "0 20 * * 1-5"
    timezone: Europe/Berlin
    action: pause
    target: dev
`,
} as const satisfies ActionSpec;
