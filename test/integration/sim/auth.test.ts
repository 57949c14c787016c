import { describe, expect, it } from 'vitest';
import { OPERATION_ROUTES } from '../../../src/sim/index.js';
import { call, startSim } from './harness.js';

const apiKeyRoutes = OPERATION_ROUTES.filter((route) => route.auth === 'apiKey');
const concrete = (url: string) => url.replace(/:(\w+)/g, 'x-$1');

describe('authentication', () => {
  it.each(apiKeyRoutes.map((route) => [route.name, route] as const))(
    'answers 401 Unauthorized to %s without an x-api-key, and with a wrong one',
    async (_name, route) => {
      const sim = await startSim();
      const missing = await call(sim, route.method, concrete(route.url), { auth: 'none' });
      expect(missing.status).toBe(401);
      expect(missing.json).toMatchObject({
        Error: true,
        ErrorDetails: [{ Type: 'Unauthorized', FieldName: 'x-api-key' }],
      });
      expect(missing.json).not.toHaveProperty('Result');
      const wrong = await call(sim, route.method, concrete(route.url), {
        auth: 'none',
        headers: { 'x-api-key': 'not-the-key' },
      });
      expect(wrong.status).toBe(401);
      const right = await call(sim, route.method, concrete(route.url));
      expect(right.status).not.toBe(401);
    },
  );

  it('checks the key before the body, so an unauthenticated bad body still answers 401', async () => {
    const sim = await startSim();
    const res = await fetch(`${sim.url}/controller/v4/v2/workgroups/x/workspaces/y/backups/restore`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(401);
  });

  it('refuses an API key alone on /users with 401 Unauthorized', async () => {
    const sim = await startSim();
    const res = await call(sim, 'GET', '/users', { auth: 'key' });
    expect(res.status).toBe(401);
    expect(res.json.ErrorDetails[0]).toMatchObject({ Type: 'Unauthorized', FieldName: 'Authorization' });
    expect(res.json.ErrorDetails[0].Reason).toContain('API key');
  });

  it('answers 401 on /users for a missing, malformed or wrong bearer token', async () => {
    const sim = await startSim();
    for (const headers of [
      {},
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer wrong' },
    ] as Record<string, string>[]) {
      const res = await call(sim, 'GET', '/users', { auth: 'none', headers });
      expect(res.status).toBe(401);
    }
  });

  it('accepts the bearer token on /users, with or without an API key beside it', async () => {
    const sim = await startSim();
    expect((await call(sim, 'GET', '/users', { auth: 'bearer' })).status).toBe(200);
    const both = await call(sim, 'GET', '/users', {
      auth: 'bearer',
      headers: { 'x-api-key': 'test-api-key' },
    });
    expect(both.status).toBe(200);
  });

  it('does not accept the bearer token in place of the API key', async () => {
    const sim = await startSim();
    const res = await call(sim, 'GET', '/controller/v4/v2/workgroups', { auth: 'bearer' });
    expect(res.status).toBe(401);
  });
});
