import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { type PolicyJob, parsePolicy } from '../../../src/policy/index.js';
import { planCatchUp } from '../../../src/scheduler/catch-up.js';

function job(extra: string): PolicyJob {
  const text = `version: 1
targets:
  all: { workgroups: ["*"] }
jobs:
  j:
    schedule: "* * * * * *"
    action: pause
    target: all
${extra}`;
  const [parsed] = parsePolicy(text, 'catch-up.yaml', { registry: actionRegistry, env: {} }).jobs;
  return parsed as PolicyJob;
}

const now = new Date('2026-11-22T10:00:00.500Z');
const at = (iso: string) => new Date(iso).getTime();

describe('planCatchUp', () => {
  it('runs the most recent missed tick inside the window once and records the older ones as missed', () => {
    const plan = planCatchUp(job('    catchUp: 1m\n'), new Date('2026-11-22T09:59:50Z'), now);
    expect(plan.run?.at.getTime()).toBe(at('2026-11-22T10:00:00Z'));
    expect(plan.missed.map((f) => f.at.toISOString())).toHaveLength(9);
    expect(plan.missed[0]?.at.getTime()).toBe(at('2026-11-22T09:59:51Z'));
    expect(plan.missed.some((f) => f.at.getTime() === plan.run?.at.getTime())).toBe(false);
  });

  it('runs nothing without a catch-up window and records every missed tick', () => {
    const plan = planCatchUp(job(''), new Date('2026-11-22T09:59:50Z'), now);
    expect(plan.run).toBeUndefined();
    expect(plan.missed).toHaveLength(10);
  });

  it('runs nothing when the latest missed tick is older than the window', () => {
    const hourly = job('    catchUp: 5m\n').schedule;
    const plan = planCatchUp(
      { ...job('    catchUp: 5m\n'), schedule: { ...hourly, cron: '0 0 * * * *' } },
      new Date('2026-11-22T08:30:00Z'),
      new Date('2026-11-22T09:30:00Z'),
    );
    expect(plan.run).toBeUndefined();
    expect(plan.missed.map((f) => f.at.toISOString())).toEqual(['2026-11-22T09:00:00.000Z']);
  });

  it('finds the latest tick even when more ticks were missed than it lists', () => {
    const plan = planCatchUp(job('    catchUp: 1h\n'), new Date('2026-11-22T09:00:00Z'), now);
    expect(plan.run?.at.getTime()).toBe(at('2026-11-22T10:00:00Z'));
    expect(plan.missed).toHaveLength(1000);
  });

  it('owes nothing when no tick fell due', () => {
    expect(planCatchUp(job('    catchUp: 1m\n'), new Date('2026-11-22T10:00:00.100Z'), now)).toEqual({
      run: undefined,
      missed: [],
    });
  });
});
