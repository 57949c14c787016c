import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_BEARER_TOKEN, type SimState, seedState } from '../../../src/sim/index.js';
import { expectNoSecretLeak, mutatingCalls, useActionSim } from '../../helpers/actions.js';

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

const policy = (withLine = '') => `version: 1
jobs:
  review:
    schedule: "0 8 1 * *"
    action: org-user-review
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
${withLine ? `    with: ${withLine}\n` : ''}`;

type OrgUser = SimState['orgUsers'][number];
const role = { id: 'role-1', name: 'viewer', displayName: 'Viewer' };
const user = (username: string, fields: Partial<OrgUser>): OrgUser => ({
  id: `usr-${username}`,
  username,
  enabled: true,
  roles: [role],
  created: ago(500),
  ...fields,
});

/** Users with known ages, relative to now (the seeded ones count back from 2025-06-01). */
const USERS: OrgUser[] = [
  user('alice', { metadata: { lastLogin: ago(2) } }),
  user('bob', { metadata: { lastLogin: ago(120), attachedTo: ['wg-1'] } }),
  user('carol', { enabled: false, roles: [], metadata: { lastLogin: ago(200) } }),
  user('dave', { roles: [], metadata: { lastLogin: ago(1) } }),
  user('erin', { created: ago(10) }),
  user('frank', { created: ago(400) }),
];

function usersState(users: OrgUser[] = USERS): SimState {
  const state = seedState({ seed: 4, fleet: { workgroups: 1, workspacesPerWorkgroup: 1 } });
  state.orgUsers = users;
  return state;
}

const described = (summary: RunSummary) => summary.findings.map((f) => `${f.rule} ${f.subject}`).sort();

describe('org-user-review against the simulator', () => {
  const harness = useActionSim(usersState);

  it('flags stale, disabled and role-less users in one review target', async () => {
    const run = await harness.run(policy(), 'review');
    expect(run.summary.outcome).toBe('succeeded');
    expect(described(run.summary)).toEqual([
      'org-user/disabled carol',
      'org-user/no-roles dave',
      'org-user/stale bob',
      'org-user/stale frank',
    ]);
    expect(run.summary.findings.find((f) => f.subject === 'bob')).toMatchObject({
      severity: 'warning',
      message: expect.stringMatching(/^enabled but last signed in 120 days ago/),
    });
    expect(run.summary.findings.find((f) => f.subject === 'frank')?.message).toMatch(
      /no last login recorded; created 400 days ago/,
    );
    expect(run.summary.targets).toEqual([
      expect.objectContaining({
        key: 'org-users',
        outcome: 'succeeded',
        attempts: 1,
        detail: { users: 6, disabled: 1, stale: 2, noRoles: 1, staleAfterDays: 90, findings: 4 },
      }),
    ]);
    expect(run.requests.find((r) => r.operation === 'listOrgUsers')?.auth).toBe('authorization');
  });

  it('honours staleAfter in days and turns the disabled and no-roles checks off', async () => {
    const run = await harness.run(
      policy('{ staleAfter: 100d, flagDisabled: false, flagNoRoles: false }'),
      'review',
    );
    expect(described(run.summary)).toEqual(['org-user/stale bob', 'org-user/stale frank']);
    // erin never signed in and her account is 10 days old: stale after 5 days, not after 90
    const strict = await harness.run(policy('{ staleAfter: 5d }'), 'review');
    expect(described(strict.summary)).toContain('org-user/stale erin');
    expect(described(strict.summary)).not.toContain('org-user/stale alice');
  });

  it('reports a clean organization without findings', async () => {
    harness.sim.reset({
      state: usersState([USERS[0] as OrgUser, user('gina', { metadata: { lastLogin: ago(30) } })]),
    });
    const run = await harness.run(policy(), 'review');
    expect(run.summary.findings).toEqual([]);
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', detail: { users: 2, findings: 0 } });
  });

  it('reviews the one user of an organization answered as a single object', async () => {
    harness.sim.reset({ state: usersState([user('bob', { metadata: { lastLogin: ago(120) } })]) });
    expect(
      Array.isArray(
        await (
          await fetch(`${harness.sim.url}/users`, {
            headers: { authorization: `Bearer ${DEFAULT_BEARER_TOKEN}` },
          })
        ).json(),
      ),
    ).toBe(false);
    const run = await harness.run(policy(), 'review');
    expect(described(run.summary)).toEqual(['org-user/stale bob']);
  });

  it('fails at once, without a request, naming NIGHTSHIFT_BEARER_TOKEN when no bearer token is configured', async () => {
    const { summary, requests } = await harness.run(policy(), 'review', { bearerToken: null });
    expect(summary.outcome).toBe('failed');
    expect(summary.targets[0]).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(summary.targets[0]?.error?.message).toMatch(
      /no bearer token configured.*set NIGHTSHIFT_BEARER_TOKEN/,
    );
    expect(requests.filter((r) => r.operation === 'listOrgUsers')).toEqual([]);
  });

  it('fails after one attempt when the API refuses the bearer token', async () => {
    const run = await harness.run(policy(), 'review', { bearerToken: 'not-the-token' });
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { type: 'Unauthorized', status: 401, retryable: false },
    });
    expectNoSecretLeak(run, ['not-the-token']);
  });

  it('retries a transient server error on the listing and reports the findings once', async () => {
    // seed 33: the first affected request fails, the next ones pass
    harness.sim.setFaults({ errorRate: 0.5, seed: 33, operations: ['listOrgUsers'] });
    const run = await harness.run(policy(), 'review');
    expect(run.requests.filter((r) => r.operation === 'listOrgUsers').map((r) => r.status)).toEqual([
      500, 200,
    ]);
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(run.summary.findings).toHaveLength(4);
  });

  it('a dry run makes the same read-only call and reports the same findings', async () => {
    const dry = await harness.run(policy(), 'review', { dryRun: true });
    expect(mutatingCalls(dry)).toEqual([]);
    expect(dry.summary.targets[0]).toMatchObject({ outcome: 'planned' });
    expect(described(dry.summary)).toEqual(described((await harness.run(policy(), 'review')).summary));
  });
});
