import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { badRequest, type Json } from './envelope.js';
import { FaultConfigSchema } from './faults.js';
import { type Fleet, parseFleet } from './fleet.js';
import type { Simulator } from './simulator.js';
import { StateError } from './state-file.js';
import { parseBody } from './validation.js';

export const ADMIN_PREFIX = '/_sim/';

const ResetBodySchema = z.strictObject({
  seed: z.number().int().min(0).max(0xffff_ffff).optional(),
  fleet: z.string().optional(),
  state: z.unknown().optional(),
});

const RequestsQuerySchema = z.object({ since: z.coerce.number().int().min(0).default(0) });

export type SendJson = (reply: FastifyReply, status: number, json: Json) => void;

/**
 * The test-and-demo API under `/_sim/`: read the whole state and the request log, change the
 * faults, reset. Bodies are plain JSON, not the envelope; errors use the envelope.
 */
export function registerAdminRoutes(app: FastifyInstance, sim: Simulator, send: SendJson): void {
  app.get(`${ADMIN_PREFIX}state`, (_request, reply) => send(reply, 200, sim.cache.stateJson()));

  app.get(`${ADMIN_PREFIX}requests`, (request, reply) => {
    const { since } = parseBody(RequestsQuerySchema, request.query);
    send(reply, 200, JSON.stringify(sim.requestLog.since(since)));
  });

  app.get(`${ADMIN_PREFIX}faults`, (_request, reply) => send(reply, 200, JSON.stringify(sim.faults.config)));

  app.put(`${ADMIN_PREFIX}faults`, (request, reply) => {
    const config = parseBody(FaultConfigSchema, request.body);
    sim.faults.configure(config);
    send(reply, 200, JSON.stringify(config));
  });

  app.post(`${ADMIN_PREFIX}reset`, (request, reply) => {
    const body = parseBody(ResetBodySchema, request.body);
    let fleet: Fleet | undefined;
    if (body.fleet !== undefined) {
      try {
        fleet = parseFleet(body.fleet);
      } catch (error) {
        throw badRequest('fleet', (error as Error).message);
      }
    }
    try {
      sim.reset({ seed: body.seed, fleet, state: body.state });
    } catch (error) {
      if (error instanceof StateError) throw badRequest('state', error.message);
      throw error;
    }
    const { state } = sim.store;
    send(
      reply,
      200,
      JSON.stringify({
        reset: true,
        workgroups: state.workgroups.length,
        workspaces: state.workspaces.length,
      }),
    );
  });
}
