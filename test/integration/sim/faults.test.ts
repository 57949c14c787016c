import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { API_KEY, call, paths, startSim } from './harness.js';

type Sim = Awaited<ReturnType<typeof startSim>>;

const allowListOf = (sim: Sim) => paths.allowList(sim.state.workgroups[0]?.workgroup_id ?? '');

async function statuses(sim: Sim, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await call(sim, 'GET', allowListOf(sim))).status);
  return out;
}

describe('fault injection', () => {
  it('delays answers by the fixed latency set through PUT /_sim/faults', async () => {
    const sim = await startSim();
    expect((await call(sim, 'PUT', '/_sim/faults', { body: { latencyMs: 120 } })).status).toBe(200);
    const started = performance.now();
    const res = await call(sim, 'GET', allowListOf(sim));
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
    expect(sim.requests().at(-1)).toMatchObject({ fault: 'latency', delayMs: 120, status: 200 });
  });

  it('adds jitter between 0 and jitterMs on top of the latency', async () => {
    const sim = await startSim({ faults: { latencyMs: 5, jitterMs: 40, seed: 3 } });
    await statuses(sim, 15);
    const delays = sim.requests().map((entry) => entry.delayMs);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...delays)).toBeLessThanOrEqual(45);
    expect(new Set(delays).size).toBeGreaterThan(3);
  });

  it('answers 500 Internal-Error in the envelope at error rate 1', async () => {
    const sim = await startSim({ faults: { errorRate: 1 } });
    const res = await call(sim, 'GET', allowListOf(sim));
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ Error: true, ErrorDetails: [{ Type: 'Internal-Error' }] });
    expect(res.json).not.toHaveProperty('Result');
    expect(typeof res.json.RequestID).toBe('string');
    expect(sim.requests().at(-1)).toMatchObject({ fault: 'error', status: 500 });
  });

  it('fails about the configured share of requests at error rate 0.3', async () => {
    const sim = await startSim({ faults: { errorRate: 0.3, seed: 11 } });
    const failures = (await statuses(sim, 100)).filter((status) => status === 500).length;
    expect(failures).toBeGreaterThan(15);
    expect(failures).toBeLessThan(45);
  });

  it('throttles beyond the rate with 429 Quota-Exceed and a Retry-After in seconds', async () => {
    const sim = await startSim({ faults: { throttleRps: 2 } });
    const responses = [];
    for (let i = 0; i < 5; i++) responses.push(await call(sim, 'GET', allowListOf(sim)));
    expect(responses.map((res) => res.status)).toEqual([200, 200, 429, 429, 429]);
    const throttled = responses[2];
    expect(throttled?.headers['retry-after']).toBe('1');
    expect(throttled?.json).toMatchObject({ Error: true, ErrorDetails: [{ Type: 'Quota-Exceed' }] });
    expect(sim.requests().map((entry) => entry.fault)).toEqual([
      null,
      null,
      'throttle',
      'throttle',
      'throttle',
    ]);
  });

  it('lets requests through again once the throttle has refilled', async () => {
    const sim = await startSim({ faults: { throttleRps: 20 } });
    const burst = (
      await Promise.all(Array.from({ length: 40 }, () => call(sim, 'GET', allowListOf(sim))))
    ).map((res) => res.status);
    expect(burst).toContain(429);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await call(sim, 'GET', allowListOf(sim))).status).toBe(200);
  });

  it('drops the connection without an answer at drop rate 1', async () => {
    const sim = await startSim({ faults: { dropRate: 1 } });
    await expect(
      request(`${sim.url}${allowListOf(sim)}`, { headers: { 'x-api-key': API_KEY } }),
    ).rejects.toThrow();
    expect(sim.requests().at(-1)).toMatchObject({ fault: 'drop', status: null });
  });

  it('leaves requests hanging at hang rate 1 until the client gives up, and close() releases them', async () => {
    const sim = await startSim({ faults: { hangRate: 1 } });
    const url = `${sim.url}${allowListOf(sim)}`;
    await expect(
      request(url, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(150) }),
    ).rejects.toThrow(/timeout/i);
    expect(sim.requests().at(-1)).toMatchObject({ fault: 'hang', status: null });
    const pending = request(url, { headers: { 'x-api-key': API_KEY } }).then(
      () => 'answered',
      () => 'released',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = performance.now();
    await sim.close();
    expect(performance.now() - closing).toBeLessThan(1000);
    expect(await pending).toBe('released');
  });

  it('makes the same decisions for the same seed, and different ones for another seed', async () => {
    const faults = { errorRate: 0.5, seed: 42 };
    const a = await startSim({ faults });
    const b = await startSim({ faults });
    const c = await startSim({ faults: { ...faults, seed: 43 } });
    const [seqA, seqB, seqC] = [await statuses(a, 30), await statuses(b, 30), await statuses(c, 30)];
    expect(seqA).toEqual(seqB);
    expect(seqA).not.toEqual(seqC);
    expect(new Set(seqA)).toEqual(new Set([200, 500]));
  });

  it('restarts the sequence when the faults are set again with the same seed', async () => {
    const sim = await startSim();
    await call(sim, 'PUT', '/_sim/faults', { body: { errorRate: 0.5, seed: 7 } });
    const first = await statuses(sim, 20);
    await call(sim, 'PUT', '/_sim/faults', { body: { errorRate: 0.5, seed: 7 } });
    expect(await statuses(sim, 20)).toEqual(first);
  });

  it('applies faults only to the listed operations', async () => {
    const sim = await startSim({ faults: { errorRate: 1, operations: ['listWorkgroups'] } });
    expect((await call(sim, 'GET', paths.workgroups())).status).toBe(500);
    expect((await call(sim, 'GET', allowListOf(sim))).status).toBe(200);
  });

  it('never injects faults into the admin API', async () => {
    const sim = await startSim({ faults: { errorRate: 1, throttleRps: 1 } });
    for (let i = 0; i < 3; i++) expect((await call(sim, 'GET', '/_sim/state')).status).toBe(200);
  });

  it('turns faults off again with an empty PUT /_sim/faults', async () => {
    const sim = await startSim({ faults: { errorRate: 1 } });
    const res = await call(sim, 'PUT', '/_sim/faults', { body: {} });
    expect(res.json).toMatchObject({ errorRate: 0, throttleRps: null, operations: null });
    expect((await call(sim, 'GET', allowListOf(sim))).status).toBe(200);
  });

  it('answers 400 naming the field for an invalid fault configuration', async () => {
    const sim = await startSim();
    const res = await call(sim, 'PUT', '/_sim/faults', { body: { errorRate: 2 } });
    expect(res.status).toBe(400);
    expect(res.json.ErrorDetails[0]).toMatchObject({ Type: 'Bad-Request', FieldName: 'errorRate' });
    const unknown = await call(sim, 'PUT', '/_sim/faults', { body: { errorRat: 0.5 } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.ErrorDetails[0]).toMatchObject({ FieldName: 'errorRat' });
  });
});
