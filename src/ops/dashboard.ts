import type { Queue } from 'bullmq';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Bull Board's page links its fonts from an outside host: on a closed network that request
 * fails, and anywhere else it tells that host the dashboard was opened. Without the link the
 * page uses the system's fonts, and every request it makes stays on this server.
 */
const OUTSIDE_FONTS = /<link[^>]*href="https:\/\/fonts\.(?:googleapis|gstatic)\.com[^"]*"[^>]*>\s*/g;

/** Headers of the dashboard's answer that belong to its own connection, not to the one it is forwarded on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

/** Bull Board over `queue` under `path`, read-only, as an app of its own that nothing listens for. */
async function dashboardApp(queue: Queue, path: string): Promise<FastifyInstance> {
  const [{ createBullBoard }, { BullMQAdapter }, { FastifyAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/fastify'),
  ]);
  const app = Fastify({ logger: false });
  app.addHook('onSend', async (_request, reply, payload) =>
    typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/html')
      ? payload.replace(OUTSIDE_FONTS, '')
      : payload,
  );
  const board = new FastifyAdapter();
  board.setBasePath(path);
  createBullBoard({
    queues: [
      new BullMQAdapter(queue, {
        readOnlyMode: true,
        description: `nightshift runs (Redis prefix "${queue.opts.prefix ?? 'bull'}")`,
      }),
    ],
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'nightshift' } },
  });
  await app.register(board.registerPlugin(), { prefix: path });
  await app.ready();
  return app;
}

/**
 * Serves the BullMQ dashboard under `path` of `scope` (whose hooks, the token check among them,
 * apply to it). Bull Board and what it brings (its validators, templates and static files: about
 * 10 MB of heap) are loaded on the dashboard's first request, not by every process that could
 * serve it: most never do.
 */
export function serveDashboard(scope: FastifyInstance, queue: Queue, path: string): void {
  let dashboard: Promise<FastifyInstance> | undefined;
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    dashboard ??= dashboardApp(queue, path).catch((error: unknown) => {
      dashboard = undefined;
      throw error;
    });
    // the token was checked here: the dashboard gets no credential
    const { authorization: _token, ...headers } = request.headers;
    const answer = await (await dashboard).inject({
      method: request.method as 'GET',
      url: request.url,
      headers,
      ...(request.body === undefined ? {} : { payload: request.body as string }),
    });
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value);
    return reply.code(answer.statusCode).send(answer.rawPayload);
  };
  scope.all(path, forward);
  scope.all(`${path}/*`, forward);
  scope.addHook('onClose', async () => {
    await (await dashboard?.catch(() => undefined))?.close();
  });
}
