import { z } from 'zod';
import { ApiError } from '../src/api/index.js';
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

const params = z
  .strictObject({
    username: DbUsernameSchema.meta({
      description: 'The in-database user to create in each selected workspace.',
    }),
    password: z.string().min(1).optional().meta({
      description:
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax, shown to users
        'Its password; give it as "${VAR}" so it stays out of the policy file. Left out, a random one is generated and delivered to sink.',
    }),
    sink: SecretSinkSchema.optional().meta({
      description:
        'Where the password is delivered before the user is created; required when password is left out.',
    }),
  })
  .refine((p) => p.password !== undefined || p.sink !== undefined, {
    error: 'give a password, or a sink to deliver the generated one to',
    path: ['sink'],
  });
type Params = z.output<typeof params>;

/**
 * The API's refusal to create a username the workspace already has. The listing shows no db users,
 * so this refusal is the only way to learn that a user exists: 400 naming `username`. The Type is
 * not checked, since the spec's samples show `Internal-Error` on its 400s.
 */
function isDuplicateUsername(error: unknown): boolean {
  return (
    error instanceof ApiError && error.status === 400 && error.details.some((d) => d.FieldName === 'username')
  );
}

/** Creates a db user in every selected workspace that does not have it yet; an existing one is left as it is. */
export const createDbUser: Action<typeof params> = {
  name: 'create-db-user',
  description:
    'Create an in-database user in each selected workspace; a workspace that already has it is skipped.',
  destructive: false,
  scope: 'workspace',
  params,
  example: `version: 1
targets:
  analytics:
    workgroups: ["analytics"]
jobs:
  reporting-user:
    description: Make sure every analytics workspace has the reporting user
    schedule: "0 6 * * 1"
    action: create-db-user
    target: analytics
    with:
      username: reporting
      # a generated password per workspace, delivered here; or give one with
      # password: "\${REPORTING_DB_PASSWORD}" (from the worker's environment)
      sink: { file: /var/lib/nightshift/secrets/reporting.jsonl }
`,

  async plan(ctx, { username, password, sink }: Params) {
    if (sink) await checkSink(ctx.secretSinks, sink);
    const delivery = sink
      ? `, delivering its ${password === undefined ? 'generated ' : ''}password to ${describeSink(sink)}`
      : '';
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async () => ({
      outcome: 'planned',
      reason: `would create "${username}" unless it exists (the API lists no db users: that shows only when creating)${delivery}`,
    }));
  },

  async run(ctx, { username, password, sink }: Params) {
    // Per target, kept across its attempts: a retry after a call that failed on the way back must
    // not create the user with one password while the sink holds another.
    const chosen = new Map<string, { password: string; secretId: string }>();
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws, step) => {
      const key = workspaceRef(ws).key;
      const identity = secretIdentity(ctx, ws, username);
      let secret = chosen.get(key);
      if (!secret) {
        secret = { password: password ?? generatePassword(DEFAULT_PASSWORD_LENGTH), secretId: newSecretId() };
        if (sink)
          await deliverSecret(
            ctx.secretSinks,
            sink,
            identity,
            secret.secretId,
            { state: 'pending', password: secret.password },
            step.signal,
          );
        chosen.set(key, secret);
      }
      const created = await ctx.api
        .createDbUser(
          ws.workgroupId,
          ws.workspaceId,
          { username, password: secret.password },
          { signal: step.signal },
        )
        .catch(async (error: unknown) => {
          const told = withoutSecret(error, secret.password);
          // only the first call with this password: after an earlier one that may have been
          // applied, a refusal (the user exists) says nothing about which password it has
          const closed =
            sink && step.attempt === 1
              ? await closeIfRejected(ctx.secretSinks, sink, identity, secret.secretId, told, step.signal)
              : told;
          if (closed === told && isDuplicateUsername(error)) return undefined;
          throw closed;
        });
      if (!created) {
        return {
          outcome: 'skipped',
          reason:
            step.attempt === 1
              ? 'already exists (left as it is)'
              : 'already exists: maybe made by an earlier attempt whose answer was lost, with the password sent then',
        };
      }
      if (sink) await markCurrent(ctx.secretSinks, sink, identity, secret.secretId, step.signal);
      return {
        outcome: 'succeeded',
        detail: {
          userId: created.result.id,
          role: created.result.role,
          ...(sink ? { sink: describeSink(sink), secretId: secret.secretId } : {}),
        },
      };
    });
  },
};
