import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CONSOLE_READ_TIMEOUT_MS, CONSOLE_REFRESH_MS } from '../../config/index.js';
import { TIMED_OUT, within } from '../../engine/index.js';
import { NightshiftError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import { parseDuration } from '../../policy/index.js';
import { type AccessGate, accessOf } from '../access/gate.js';
import { may } from '../access/roles.js';
import { registerActions } from './actions.js';
import { FleetData } from './data/fleet.js';
import { type HoldForm, holdForm, holdPreview, holdsView } from './data/holds.js';
import { MAX_SAVINGS_DAYS, SAVINGS_DAYS, savingsView } from './data/savings.js';
import { schedulesView } from './data/schedules.js';
import { type ConsoleControl, type ConsoleSources, PolicyInForce, runBrief } from './data/sources.js';
import { timelineView } from './data/timeline.js';
import type { AuditView, RunsView } from './model.js';
import {
  CONSOLE_CSS,
  CONSOLE_JS,
  FAVICON,
  type PageContext,
  type PageUser,
  renderAudit,
  renderFindings,
  renderFleet,
  renderHoldPreview,
  renderHolds,
  renderRun,
  renderRunInProgress,
  renderRuns,
  renderSavings,
  renderSchedules,
  renderTimeline,
} from './views/index.js';

export interface ConsoleOptions {
  sources: ConsoleSources;
  /** What the console changes; absent: no action, whoever signs in (the console is read-only). */
  control?: ConsoleControl | undefined;
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
/** The runs under way `/runs` lists: of each state, running and queued. */
const UNDER_WAY_LIMIT = 50;
const AuditQuerySchema = z.object({
  since: filter(100),
  limit: z.coerce.number().int().min(1).max(1_000).default(200),
});
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

/** `since`: a duration back from `now` (24h, 7d) or an ISO 8601 instant; epoch ms. */
function sinceInstant(text: string, now: Date): number {
  const ms = parseDuration(text);
  if (ms !== undefined && ms > 0) return now.getTime() - ms;
  const at = Date.parse(text);
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && !Number.isNaN(at)) return at;
  throw new BadQueryError('since: expected a duration back from now (24h, 7d) or an ISO 8601 instant');
}

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

/**
 * Who the page is for: the forms it carries and its CSRF token, the flash of the last action (taken
 * now: shown once). The local user's session starts with the first page.
 */
function pageUser(
  request: FastifyRequest,
  reply: FastifyReply,
  gate: AccessGate,
  control: ConsoleControl | undefined,
): PageUser | undefined {
  const access = accessOf(request);
  if (!access) return undefined;
  const session = control ? gate.sessionFor(request, reply, access) : access.session;
  const flash = session?.flash;
  if (session) session.flash = undefined;
  const { name, role } = access.principal;
  return {
    name,
    role,
    csrf: session?.csrf,
    signOut: access.via === 'session' && gate.hasPrincipals,
    flash,
    // a run this process cannot sign would be refused by every worker: no form for it
    may: (action) =>
      control !== undefined && (action !== 'run' || control.runNow !== undefined) && may(role, action),
  };
}

/** A page for one request: its user's forms; its ETag covers them, so a sign-in or a flash is never a 304. */
export type PageSender = (
  request: FastifyRequest,
  reply: FastifyReply,
  view: unknown,
  render: (ctx: PageContext) => string,
) => FastifyReply;

function pageSender(base: PageContext, gate: AccessGate, control: ConsoleControl | undefined): PageSender {
  return (request, reply, view, render) => {
    const user = pageUser(request, reply, gate, control);
    // JSON leaves `may` out: the role stands for it
    return sendPage(request, reply, { view, user }, () => render({ ...base, user }));
  };
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
  const runs = async (query: z.infer<typeof RunsQuerySchema>): Promise<RunsView> => {
    const [underWay, kept] = await Promise.all([
      sources.underWay(UNDER_WAY_LIMIT),
      sources.history.list(query),
    ]);
    return {
      generatedAt: generatedAt(),
      job: query.job ?? null,
      limit: query.limit,
      underWay: underWay.filter((run) => query.job === undefined || run.job === query.job),
      runs: kept.map(runBrief),
    };
  };
  const findings = async () => ({ generatedAt: generatedAt(), findings: await sources.findings.open() });
  const now = () => sources.now?.() ?? new Date();
  const audit = async ({ since, limit }: z.infer<typeof AuditQuerySchema>): Promise<AuditView> => {
    const sinceMs = since === undefined ? undefined : sinceInstant(since, now());
    return {
      generatedAt: generatedAt(),
      since: since ?? null,
      limit,
      entries: await sources.audit.list({ limit, ...(sinceMs === undefined ? {} : { sinceMs }) }),
    };
  };
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
    inProgress: (id: string) => read(sources.inProgress(id)),
    /** The names of the jobs and windows in force (what may be suspended), or why they are unknown. */
    policyNames: async (): Promise<ReadonlySet<string> | string> => {
      const { policy: inForce } = await read(policy.read());
      return typeof inForce === 'string' ? inForce : new Set(inForce.jobs.map((job) => job.name));
    },
    currentPolicy: () => read(sources.policies.current()),
    holds: () => read(holdsView(sources, now())),
    holdPreview: (form: HoldForm) => read(holdPreview(sources, policy, form, now())),
    audit: (query: z.infer<typeof AuditQuerySchema>) => read(audit(query)),
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
    const run = (await views.run(id)) ?? (await views.inProgress(id));
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
  app.get('/api/holds', async (_request, reply) => sendJson(reply, await views.holds()));
  app.get('/api/holds/preview', async (request, reply) =>
    sendJson(reply, await views.holdPreview(holdForm(request.query))),
  );
  app.get('/api/audit', async (request, reply) =>
    sendJson(reply, await views.audit(parseQuery(AuditQuerySchema, request.query))),
  );
}

function registerPages(app: FastifyInstance, views: ConsoleViews, send: PageSender): void {
  app.get('/', async (request, reply) => {
    const view = await views.schedules();
    return send(request, reply, view, (ctx) => renderSchedules(view, ctx));
  });
  app.get('/runs', async (request, reply) => {
    const view = await views.runs(parseQuery(RunsQuerySchema, request.query));
    return send(request, reply, view, (ctx) => renderRuns(view, ctx));
  });
  app.get('/runs/:id', async (request, reply) => {
    const { id } = parseQuery(RunParamsSchema, request.params);
    const run = await views.run(id);
    if (run) return send(request, reply, run, (ctx) => renderRun(run, id, ctx));
    const going = await views.inProgress(id);
    if (going) return send(request, reply, going, (ctx) => renderRunInProgress(going, ctx));
    reply.code(404);
    return send(request, reply, { missing: id }, (ctx) => renderRun(undefined, id, ctx));
  });
  app.get('/fleet', async (request, reply) => {
    const view = await views.fleet(parseQuery(FleetQuerySchema, request.query));
    return send(request, reply, view, (ctx) => renderFleet(view, ctx));
  });
  app.get('/fleet/:workgroupId/:workspaceId', async (request, reply) => {
    const view = await views.workspace(request);
    if (!view) return reply.code(404).type('text/plain; charset=utf-8').send(unknownWorkspace(request));
    return send(request, reply, view, (ctx) => renderTimeline(view, ctx));
  });
  app.get('/savings', async (request, reply) => {
    const view = await views.savings(parseQuery(SavingsQuerySchema, request.query).days);
    return send(request, reply, view, (ctx) => renderSavings(view, ctx));
  });
  app.get('/findings', async (request, reply) => {
    const view = await views.findings();
    return send(request, reply, view, (ctx) => renderFindings(view, ctx));
  });
  app.get('/holds', async (request, reply) => {
    const view = await views.holds();
    return send(request, reply, view, (ctx) => renderHolds(view, ctx));
  });
  app.get('/holds/preview', async (request, reply) => {
    const view = await views.holdPreview(holdForm(request.query));
    return send(request, reply, view, (ctx) => renderHoldPreview(view, ctx));
  });
  app.get('/audit', async (request, reply) => {
    const view = await views.audit(parseQuery(AuditQuerySchema, request.query));
    return send(request, reply, view, (ctx) => renderAudit(view, ctx));
  });
}

/**
 * The operator's console: pages at `/`, `/runs` (`?job=`), `/runs/:id`, `/fleet`, `/holds`,
 * `/savings`, `/findings`, `/audit`, and the JSON each is rendered from under `/api/`; from Redis
 * only: a page view never calls the API. With `control`, the forms of what the signed-in role may
 * change (console/actions.ts); with principals, `/login` and `/logout`.
 */
export function registerConsole(
  app: FastifyInstance,
  options: ConsoleOptions,
  gate: AccessGate,
  log: Logger,
): void {
  const views = consoleViews(options);
  const send = pageSender(views.page, gate, options.control);
  app.setErrorHandler(answerConsoleError);
  registerAssets(app);
  registerApi(app, views);
  registerPages(app, views, send);
  registerActions(app, { views, send, gate, control: options.control, sources: options.sources, log });
}
