import { queryObjects } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { parsePolicy } from '../../../src/policy/index.js';
import { readYaml } from '../../../src/policy/yaml/index.js';
import { yaml } from '../../../src/policy/yaml/package.js';

const JOBS = 300;

function policyText(): string {
  const lines = ['version: 1', 'targets:', '  dev: { workgroups: ["dev-*"] }', 'jobs:'];
  for (let i = 0; i < JOBS; i++)
    lines.push(
      `  pause-${i}:`,
      '    schedule: "0 20 * * 1-5"',
      '    action: pause',
      '    target: dev',
      '    retry: { attempts: 3 }',
    );
  return `${lines.join('\n')}\n`;
}

/** Live instances of `type` after a full collection (queryObjects collects first). */
const live = (type: abstract new (...args: never[]) => unknown) =>
  queryObjects(type as never, { format: 'count' }) as number;

describe('a policy kept after it is loaded (by a scheduler, a worker, the console)', () => {
  it('keeps neither the YAML document nor a record per key of where it was written', () => {
    const text = policyText();
    const before = { scalars: live(yaml.Scalar), maps: live(Map) };
    const policy = parsePolicy(text, 'kept.yaml', { registry: actionRegistry, env: {} });
    expect(policy.jobs).toHaveLength(JOBS);
    // the parser's nodes: 5 scalars and more per job; where each map's keys were: a Map per map
    expect(live(yaml.Scalar) - before.scalars).toBeLessThan(10);
    expect(live(Map) - before.maps).toBeLessThan(JOBS / 10);
  });

  it('still places a problem found later at its file:line:col, reading the text again when asked', () => {
    const text = policyText();
    const policy = parsePolicy(text, 'kept.yaml', { registry: actionRegistry, env: {} });
    const lines = text.split('\n');
    const job = lines.indexOf('  pause-299:') + 1;
    expect(policy.locate(['jobs', 'pause-299', 'action'])).toEqual({
      file: 'kept.yaml',
      line: job + 2,
      col: 13,
    });
    expect(policy.locate(['jobs', 'pause-299', 'retry', 'attempts'])).toEqual({
      file: 'kept.yaml',
      line: job + 4,
      col: '    retry: { attempts: '.length + 1,
    });
  });
});

describe('a YAML source kept for its positions', () => {
  it("keeps the offsets it read, not the parser's document", () => {
    const before = live(yaml.Scalar);
    const source = readYaml(policyText(), 'kept.yaml', {});
    expect(live(yaml.Scalar) - before).toBeLessThan(10);
    expect(source.locate(['jobs', 'pause-0', 'action'])).toMatchObject({ line: 7, col: 13 });
  });
});
