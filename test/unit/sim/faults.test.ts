import { describe, expect, it } from 'vitest';
import {
  type FaultConfigInput,
  FaultConfigSchema,
  FaultInjector,
  parseFaultConfig,
} from '../../../src/sim/faults.js';

const injector = (input: FaultConfigInput) => new FaultInjector(FaultConfigSchema.parse(input));

function outcomes(faults: FaultInjector, count: number, stepMs = 0) {
  return Array.from({ length: count }, (_, i) => faults.decide('listWorkgroups', i * stepMs));
}

describe('FaultInjector', () => {
  it('passes every request untouched when nothing is configured', () => {
    const decisions = outcomes(injector({}), 50);
    expect(decisions.every((d) => d.outcome === 'pass' && d.delayMs === 0)).toBe(true);
  });

  it('repeats the same sequence of decisions for the same seed', () => {
    const config = { errorRate: 0.3, dropRate: 0.1, hangRate: 0.1, jitterMs: 50, seed: 1234 };
    expect(outcomes(injector(config), 200)).toEqual(outcomes(injector(config), 200));
    expect(outcomes(injector(config), 200)).not.toEqual(outcomes(injector({ ...config, seed: 1235 }), 200));
  });

  it('draws the same randoms whatever is enabled, so turning on drops does not reshuffle errors', () => {
    const errorsOnly = outcomes(injector({ errorRate: 0.5, seed: 9 }), 100);
    const withJitter = outcomes(injector({ errorRate: 0.5, jitterMs: 10, seed: 9 }), 100);
    expect(withJitter.map((d) => d.outcome)).toEqual(errorsOnly.map((d) => d.outcome));
  });

  it('injects each fault at roughly its configured rate', () => {
    const decisions = outcomes(injector({ errorRate: 0.2, dropRate: 0.1, hangRate: 0.1, seed: 5 }), 5000);
    const share = (outcome: string) =>
      decisions.filter((d) => d.outcome === outcome).length / decisions.length;
    expect(share('drop')).toBeCloseTo(0.1, 1);
    expect(share('hang')).toBeCloseTo(0.09, 1);
    expect(share('error')).toBeCloseTo(0.16, 1);
  });

  it('delays by the latency plus a jitter within [0, jitterMs]', () => {
    const delays = outcomes(injector({ latencyMs: 100, jitterMs: 20, seed: 2 }), 500).map((d) => d.delayMs);
    expect(Math.min(...delays)).toBe(100);
    expect(Math.max(...delays)).toBe(120);
  });

  it('throttles to the rate with a burst of one second and a Retry-After of whole seconds', () => {
    const faults = injector({ throttleRps: 3 });
    const at = (ms: number) => faults.decide('listWorkgroups', ms);
    expect([at(0), at(0), at(0)].map((d) => d.outcome)).toEqual(['pass', 'pass', 'pass']);
    expect(at(0)).toMatchObject({ outcome: 'throttle', retryAfterSeconds: 1 });
    expect(at(340).outcome).toBe('pass');
    expect(at(340).outcome).toBe('throttle');
  });

  it('asks a slow-rate client to wait several seconds', () => {
    const faults = injector({ throttleRps: 0.2 });
    expect(faults.decide('listWorkgroups', 0).outcome).toBe('pass');
    expect(faults.decide('listWorkgroups', 0)).toMatchObject({ outcome: 'throttle', retryAfterSeconds: 5 });
  });

  it('leaves operations outside the configured list alone, without consuming randoms', () => {
    const faults = injector({ errorRate: 1, operations: ['pauseWorkspace'] });
    expect(faults.decide('listWorkgroups', 0).outcome).toBe('pass');
    expect(faults.decide('pauseWorkspace', 0).outcome).toBe('error');
  });

  it('restarts the sequence and refills the bucket on configure', () => {
    const faults = injector({ errorRate: 0.5, throttleRps: 1, seed: 3 });
    const first = outcomes(faults, 1);
    expect(faults.decide('listWorkgroups', 0).outcome).toBe('throttle');
    faults.configure(FaultConfigSchema.parse({ errorRate: 0.5, throttleRps: 1, seed: 3 }));
    expect(outcomes(faults, 1)).toEqual(first);
  });
});

describe('FaultConfigSchema', () => {
  it('defaults every fault to off', () => {
    expect(FaultConfigSchema.parse({})).toEqual({
      latencyMs: 0,
      jitterMs: 0,
      errorRate: 0,
      throttleRps: null,
      dropRate: 0,
      hangRate: 0,
      seed: 1,
      operations: null,
    });
  });

  it.each([
    [{ errorRate: 1.5 }, 'errorRate'],
    [{ dropRate: -0.1 }, 'dropRate'],
    [{ latencyMs: 1.5 }, 'latencyMs'],
    [{ throttleRps: 0 }, 'throttleRps'],
    [{ operations: ['rebootEverything'] }, 'operations'],
    [{ latency: 5 }, ''],
  ])('rejects %j', (input, path) => {
    const result = FaultConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(String(result.error?.issues[0]?.path[0] ?? '')).toBe(path);
  });
});

describe('parseFaultConfig', () => {
  it('names the source and the field of a bad configuration given in code', () => {
    expect(() => parseFaultConfig({ hangRate: 3 }, 'options.faults')).toThrow(/^options\.faults: hangRate: /);
  });
});
