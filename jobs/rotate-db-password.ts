import { z } from 'zod';
import { type Action, workspaceRef } from '../src/engine/index.js';
import {
  checkSink,
  closeIfRejected,
  DbUsernameSchema,
  DEFAULT_PASSWORD_LENGTH,
  deliverSecret,
  describeSink,
  generatePassword,
  markCurrent,
  newSecretId,
  SecretSinkSchema,
  secretIdentity,
  withoutSecret,
} from './support/secret-sink.js';

const params = z.strictObject({
  username: DbUsernameSchema.meta({
    description: 'The in-database user whose password changes in each selected workspace.',
  }),
  sink: SecretSinkSchema,
  length: z.int().min(16).max(128).default(DEFAULT_PASSWORD_LENGTH).meta({
    description: 'Characters in each generated password (letters and digits).',
    default: DEFAULT_PASSWORD_LENGTH,
  }),
});
type Params = z.output<typeof params>;

/**
 * Gives a db user a new random password in every selected workspace. Each password reaches the
 * sink (as `pending`) before the API call that sets it and is marked `current` after (`rejected`
 * when the API refused it), so a password in effect is always one the sink holds, whatever fails
 * in between.
 */
export const rotateDbPassword: Action<typeof params> = {
  name: 'rotate-db-password',
  description:
    'Set a new random password for an in-database user in each selected workspace, delivered to a secret sink.',
  destructive: false,
  scope: 'workspace',
  params,
  example: `version: 1
targets:
  prod:
    workgroups: ["prod-*"]
jobs:
  rotate-app-password:
    description: Monthly rotation of the application's database password
    schedule: "0 3 1 * *"
    timezone: Europe/Berlin
    action: rotate-db-password
    target: prod
    with:
      username: app
      sink: { command: ["/usr/local/bin/store-secret", "--vault", "prod"] }
`,

  async plan(ctx, { username, sink, length }: Params) {
    await checkSink(ctx.secretSinks, sink);
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async () => ({
      outcome: 'planned',
      reason: `would set a new ${length}-character password for "${username}" and deliver it to ${describeSink(sink)}`,
    }));
  },

  async run(ctx, { username, sink, length }: Params) {
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws, step) => {
      const identity = secretIdentity(ctx, ws, username);
      // A retry draws a new password too: the failed call may or may not have set the old one,
      // and only a password whose call succeeded is ever marked current.
      const secretId = newSecretId();
      const password = generatePassword(length);
      await deliverSecret(
        ctx.secretSinks,
        sink,
        identity,
        secretId,
        { state: 'pending', password },
        step.signal,
      );
      await ctx.api
        .updateDbUserPassword(ws.workgroupId, ws.workspaceId, { username, password }, { signal: step.signal })
        .catch(async (error: unknown) => {
          const told = withoutSecret(error, password);
          throw await closeIfRejected(ctx.secretSinks, sink, identity, secretId, told, step.signal);
        });
      await markCurrent(ctx.secretSinks, sink, identity, secretId, step.signal);
      return { outcome: 'succeeded', detail: { sink: describeSink(sink), secretId } };
    });
  },
};
