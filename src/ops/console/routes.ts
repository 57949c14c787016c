import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CONSOLE_READ_TIMEOUT_MS, CONSOLE_REFRESH_MS } from '../../config/index.js';
import { TIMED_OUT, within } from '../../engine/index.js';
import { NightshiftError } from '../../errors/index.js';
import { FleetData } from './data/fleet.js';
import { MAX_SAVINGS_DAYS, SAVINGS_DAYS, savingsView } from './data/savings.js';
import { schedulesView } from './data/schedules.js';
import { type ConsoleSources, PolicyInForce, runBrief } from './data/sources.js';
import { timelineView } from './data/timeline.js';
import type { RunsView } from './model.js';
import {
  CONSOLE_CSS,
  CONSOLE_JS,
  FAVICON,
  type PageContext,
  renderFindings,
  renderFleet,
  renderRun,
  renderRuns,
  renderSavings,
  renderSchedules,
  renderTimeline,
} from './views/index.js';

export interface ConsoleOptions {
  sources: ConsoleSources;
  /** How often an open page refreshes itself. Default 5000 ms; 0 never. */
  refreshMs?: number;
  /**
   * How long a page waits for Redis before answering 503. Default 5000 ms. The connection waits out
   * an outage (commands queue until Redis is back), so without it a page would hang as long.
   */
  readTimeoutMs?: number;
}

/**
 * Every request the console answers stays on this server: its own script and styles, nothing
 * inline. The ops server adds the headers every answer carries (nosniff, no framing, no referrer).
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** A filter form sends `workgroup=` for "all": empty means no filter. */
const filter = (max: number) =>
  z
    .string()
    .max(max)
    .optional()
    .transform((value) => value || undefined);
const FleetQuerySchema = z.object({ workgroup: filter(200), state: filter(100) });
const SavingsQuerySchema = z.object({
  days: z.coerce.number().int().min(1).max(MAX_SAVINGS_DAYS).default(SAVINGS_DAYS),
});
const RunsQuerySchema = z.object({
  job: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
const RunParamsSchema = z.object({ id: z.string().min(1).max(300) });
const WorkspaceParamsSchema = z.object({
  workgroupId: z.string().min(1).max(200),
  workspaceId: z.string().min(1).max(200),
});

/** Redis did not answer a console page in time: 503, and logged at debug only (the connection reports an outage once). */
export class RedisUnansweredError extends NightshiftError {
  override name = 'RedisUnansweredError';
  readonly code = 'NS_CONSOLE_REDIS_UNANSWERED';
  readonly statusCode = 503;
}

/** `work`, or a RedisUnansweredError once `ms` have passed without its answer. */
async function answeredWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  const answer = await within(work, ms);
  if (answer === TIMED_OUT)
    throw new RedisUnansweredError(`Redis did not answer within ${ms} ms; retrying is safe`);
  return answer;
}

/** A query that does not parse is the client's mistake: 400 naming the parameter. */
class BadQueryError extends Error {
  readonly statusCode = 400;
}

function parseQuery<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new BadQueryError(`${issue?.path.join('.') || 'query'}: ${issue?.message ?? 'invalid'}`);
}

const HOUR_MS = 3_600_000;

/**
 * What tells one answer from the next for a page that refreshes itself: the data, not the
 * instant it was read (`generatedAt`; a listing's age only by the hour, when the page starts
 * warning that the listing is old), so an unchanged view costs a 304.
 */
function etagOf(view: unknown): string {
  const stable = JSON.stringify(view, (key, value) => {
    if (key === 'generatedAt') return undefined;
    return key === 'ageMs' && typeof value === 'number' ? Math.floor(value / HOUR_MS) : value;
  });
  return `"${createHash('sha256').update(stable).digest('base64url').slice(0, 27)}"`;
}

function sendPage(request: FastifyRequest, reply: FastifyReply, view: unknown, html: () => string) {
  const etag = etagOf(view);
  reply
    .header('cache-control', 'no-cache')
    .header('etag', etag)
    .header('content-security-policy', CONTENT_SECURITY_POLICY);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type('text/html; charset=utf-8').send(html());
}

function sendJson(reply: FastifyReply, view: unknown) {
  return reply.header('cache-control', 'no-store').send(view);
}

function sendAsset(reply: FastifyReply, type: string, body: string) {
  return reply.type(type).header('cache-control', 'public, max-age=31536000, immutable').send(body);
}

/**
 * What every page and its JSON are rendered from, each read from Redis within the console's time
 * limit (a RedisUnansweredError past it).
 */
function consoleViews(options: ConsoleOptions) {
  const { sources } = options;
  const policy = new PolicyInForce(sources);
  const fleet = new FleetData(sources, policy);
  const timeoutMs = options.readTimeoutMs ?? CONSOLE_READ_TIMEOUT_MS;
  const read = <T>(work: Promise<T>) => answeredWithin(work, timeoutMs);
  const generatedAt = () => (sources.now?.() ?? new Date()).toISOString();
  const runs = async (query: z.infer<typeof RunsQuerySchema>): Promise<RunsView> => ({
    generatedAt: generatedAt(),
    job: query.job ?? null,
    limit: query.limit,
    runs: (await sources.history.list(query)).map(runBrief),
  });
  const findings = async () => ({ generatedAt: generatedAt(), findings: await sources.findings.open() });
  return {
    page: { base: '', refreshMs: options.refreshMs ?? CONSOLE_REFRESH_MS } satisfies PageContext,
    schedules: () => read(schedulesView(sources, policy)),
    runs: (query: z.infer<typeof RunsQuerySchema>) => read(runs(query)),
    run: (id: string) => read(sources.history.get(id)),
    fleet: (query: z.infer<typeof FleetQuerySchema>) => read(fleet.view(query)),
    workspace: (request: FastifyRequest) => {
      const { workgroupId, workspaceId } = parseQuery(WorkspaceParamsSchema, request.params);
      return read(timelineView(sources, fleet, workgroupId, workspaceId));
    },
    savings: (days: number) => read(savingsView(sources, days)),
    findings: () => read(findings()),
  };
}

type ConsoleViews = ReturnType<typeof consoleViews>;

function unknownWorkspace(request: FastifyRequest): string {
  const { workgroupId, workspaceId } = request.params as { workgroupId: string; workspaceId: string };
  return `nothing is known of workspace ${workgroupId}/${workspaceId}: the last listing does not have it, and no run, pause or hold recorded it`;
}

/** A bad query is 400, Redis too slow 503 (try again), anything else 500: the console reads nothing but Redis. */
function answerConsoleError(error: Error, _request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof BadQueryError)
    return reply
      .code(400)
      .header('cache-control', 'no-store')
      .send({ error: 'Bad Request', message: error.message });
  if (error instanceof RedisUnansweredError)
    return reply
      .code(503)
      .header('cache-control', 'no-store')
      .header('retry-after', '5')
      .send({ error: 'Service Unavailable', message: error.message });
  // the console reads Redis only: anything else is Redis failing (logged by the server's onError hook)
  return reply
    .code(500)
    .header('cache-control', 'no-store')
    .send({
      error: 'Internal Server Error',
      message: `the console could not read Redis: ${error.message}`,
    });
}

function registerAssets(app: FastifyInstance): void {
  app.get('/console/console.css', (_request, reply) =>
    sendAsset(reply, 'text/css; charset=utf-8', CONSOLE_CSS),
  );
  app.get('/console/console.js', (_request, reply) =>
    sendAsset(reply, 'text/javascript; charset=utf-8', CONSOLE_JS),
  );
  // browsers ask for it by this name whatever a page links (the JSON under /api/, the dashboard)
  app.get('/favicon.ico', (_request, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(FAVICON),
  );
}

/** The JSON each page is rendered from, under `/api/`. */
function registerApi(app: FastifyInstance, views: ConsoleViews): void {
  app.get('/api/schedules', async (_request, reply) => sendJson(reply, await views.schedules()));
  app.get('/api/runs', async (request, reply) =>
    sendJson(reply, await views.runs(parseQuery(RunsQuerySchema, request.query))),
  );
  app.get('/api/runs/:id', async (request, reply) => {
    const { id } = parseQuery(RunParamsSchema, request.params);
    const run = await views.run(id);
    if (!run)
      return reply
        .code(404)
        .header('cache-control', 'no-store')
        .send({ error: 'Not Found', message: `run ${id} is not kept (it expired, or was never recorded)` });
    return sendJson(reply, run);
  });
  app.get('/api/fleet', async (request, reply) =>
    sendJson(reply, await views.fleet(parseQuery(FleetQuerySchema, request.query))),
  );
  app.get('/api/fleet/:workgroupId/:workspaceId', async (request, reply) => {
    const view = await views.workspace(request);
    if (!view)
      return reply
        .code(404)
        .header('cache-control', 'no-store')
        .send({ error: 'Not Found', message: unknownWorkspace(request) });
    return sendJson(reply, view);
  });
  app.get('/api/savings', async (request, reply) =>
    sendJson(reply, await views.savings(parseQuery(SavingsQuerySchema, request.query).days)),
  );
  app.get('/api/findings', async (_request, reply) => sendJson(reply, await views.findings()));
}

function registerPages(app: FastifyInstance, views: ConsoleViews): void {
  const { page } = views;
  app.get('/', async (request, reply) => {
    const view = await views.schedules();
    return sendPage(request, reply, view, () => renderSchedules(view, page));
  });
  app.get('/runs', async (request, reply) => {
    const view = await views.runs(parseQuery(RunsQuerySchema, request.query));
    return sendPage(request, reply, view, () => renderRuns(view, page));
  });
  app.get('/runs/:id', async (request, reply) => {
    const { id } = parseQuery(RunParamsSchema, request.params);
    const run = await views.run(id);
    if (!run) reply.code(404);
    return sendPage(request, reply, run ?? { missing: id }, () => renderRun(run, id, page));
  });
  app.get('/fleet', async (request, reply) => {
    const view = await views.fleet(parseQuery(FleetQuerySchema, request.query));
    return sendPage(request, reply, view, () => renderFleet(view, page));
  });
  app.get('/fleet/:workgroupId/:workspaceId', async (request, reply) => {
    const view = await views.workspace(request);
    if (!view) return reply.code(404).type('text/plain; charset=utf-8').send(unknownWorkspace(request));
    return sendPage(request, reply, view, () => renderTimeline(view, page));
  });
  app.get('/savings', async (request, reply) => {
    const view = await views.savings(parseQuery(SavingsQuerySchema, request.query).days);
    return sendPage(request, reply, view, () => renderSavings(view, page));
  });
  app.get('/findings', async (request, reply) => {
    const view = await views.findings();
    return sendPage(request, reply, view, () => renderFindings(view, page));
  });
}

/**
 * The operator's console: pages at `/`, `/runs` (`?job=`), `/runs/:id`, `/fleet`, `/savings`, `/findings`, and the
 * JSON each is rendered from under `/api/`. Read-only, and from Redis only: a page view never
 * calls the API.
 */
export function registerConsole(app: FastifyInstance, options: ConsoleOptions): void {
  const views = consoleViews(options);
  app.setErrorHandler(answerConsoleError);
  registerAssets(app);
  registerApi(app, views);
  registerPages(app, views);
}
