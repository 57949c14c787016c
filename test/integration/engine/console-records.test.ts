import { describe, expect, it } from 'vitest';
import { FindingsLedger } from '../../../src/store/findings.js';
import { RedisFleetListings } from '../../../src/store/fleet-listing.js';
import { useEngineHarness } from '../../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 2, workspacesPerWorkgroup: 3 });

const policy = `version: 1
jobs:
  audit-ips:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    with:
      forbid: ["0.0.0.0/0"]
`;

/** Opens the first workgroup's allow list to the world, which the audit reports. */
function openToTheWorld(): string {
  const [workgroup] = harness.sim.state.workgroups;
  if (!workgroup) throw new Error('no workgroup');
  workgroup.allow_list = [{ id: 'al-open', cidr: '0.0.0.0/0', note: 'temporary' }];
  return workgroup.name;
}

describe('what a worker’s run leaves for the console', () => {
  it('leaves the fleet listing it saw and its findings, with when they first appeared', async () => {
    const engine = harness.engine('console-records');
    const workgroup = openToTheWorld();
    engine.worker(harness.sim.url);
    const first = await engine.waitForRun(await engine.enqueue(policy, 'audit-ips'));
    expect(first.outcome).toBe('succeeded');
    expect(first.findings.length).toBeGreaterThan(0);

    const listing = await new RedisFleetListings(engine.redis, { prefix: engine.prefix }).latest();
    expect(listing).toMatchObject({ runId: first.runId, job: 'audit-ips' });
    expect(
      listing?.workgroups
        .flatMap((wg) => wg.workspaces ?? [])
        .map((ws) => ws.workspace_id)
        .sort(),
    ).toEqual(harness.sim.state.workspaces.map((ws) => ws.workspace_id).sort());

    const second = await engine.waitForRun(await engine.enqueue(policy, 'audit-ips'));
    const open = await new FindingsLedger(engine.redis, { prefix: engine.prefix }).open();
    expect(open.length).toBe(second.findings.length);
    for (const finding of open)
      expect(finding).toMatchObject({
        job: 'audit-ips',
        firstSeen: first.finishedAt,
        lastSeen: second.finishedAt,
        runId: second.runId,
      });
    expect(open.map((finding) => finding.subject).join(' ')).toContain(workgroup);
  });

  it('records the run although its findings could not be kept, and logs why', async () => {
    const engine = harness.engine('console-records-broken');
    openToTheWorld();
    // a key of the wrong type: every write of the findings fails
    await engine.redis.set(engine.keys.findings, 'not a hash');
    engine.worker(harness.sim.url);
    const run = await engine.waitForRun(await engine.enqueue(policy, 'audit-ips'));
    expect(run.outcome).toBe('succeeded');
    expect(engine.lines('could not record the run’s findings; its summary is kept')).toEqual([
      expect.objectContaining({ runId: run.runId, job: 'audit-ips', level: 40 }),
    ]);
  });
});
