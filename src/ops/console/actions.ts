import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  approveRun,
  type CancelResult,
  type DecisionResult,
  NotAnApproverError,
  type Origin,
  placeHold,
  RunAwaitingApprovalError,
  rejectRun,
  releaseHold,
  requestCancel,
  suspendJob,
  UnknownApprovalError,
  UnknownRunError,
  unsuspendJob,
} from '../../control/index.js';
import { holdPatternProblem } from '../../engine/index.js';
import type { Logger } from '../../log/index.js';
import type { CurrentPolicy } from '../../store/index.js';
import { type Access, type AccessGate, accessOf, crossSite, postProblem } from '../access/gate.js';
import { CONSOLE_ACTIONS, type ConsoleAction } from '../access/roles.js';
import { exceptionEnd, holdForm, holdFromForm } from './data/holds.js';
import { queueFromConsole, RUN_NOW_UNAVAILABLE, runNowForm } from './data/run-now.js';
import type { ConsoleControl, ConsoleSources } from './data/sources.js';
import type { PageSender } from './routes.js';
import { renderLogin } from './views/index.js';
import { paths } from './views/layout.js';

/** What the console's forms need: the pages to go back to, who asks, and what changes. */
export interface ActionDeps {
  views: {
    page: { base: string; refreshMs: number };
    policyNames(): Promise<ReadonlySet<string> | string>;
    /** The record of the policy in force, its text when a key of this process signed it. */
    currentPolicy(): Promise<CurrentPolicy | undefined>;
  };
  send: PageSender;
  gate: AccessGate;
  control: ConsoleControl | undefined;
  sources: ConsoleSources;
  log: Logger;
}

type Flash = { text: string; ok: boolean };
type Form = Record<string, string>;

/** A form field as text, trimmed and bounded; empty when absent. */
function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Form | undefined)?.[name];
  return typeof value === 'string' ? value.trim().slice(0, 1_000) : '';
}

/** Who made a change, and from where, as the audit trail records it. */
function originOf(request: FastifyRequest, access: Access): Origin {
  return { who: access.principal.name, where: `console ${request.ip}` };
}

/**
 * Redirect-after-POST: the page to go back to, which shows `flash` once. A bearer request (a
 * script, no session to carry the flash) gets the outcome as JSON instead.
 */
function finish(reply: FastifyReply, access: Access, to: string, flash: Flash): FastifyReply {
  reply.header('cache-control', 'no-store');
  if (access.session) {
    access.session.flash = flash;
    return reply.code(303).header('location', to).send();
  }
  return reply.code(flash.ok ? 200 : 400).send({ ok: flash.ok, message: flash.text, location: to });
}

function cancelFlash(result: CancelResult): Flash {
  if (result.state === 'finished')
    return { ok: false, text: `${result.runId} already finished (${result.outcome}): nothing to cancel` };
  if (result.state === 'cancelled') return { ok: true, text: `${result.runId} was cancelled already` };
  return {
    ok: true,
    text: `${result.requested ? 'Cancelling' : 'Already cancelling'} ${result.runId}: it starts no new target; those under way finish their step`,
  };
}

/**
 * The console's POST routes: sign-in and sign-out, and each change a role may make, made through
 * src/control (so it is in the audit trail with who = the principal, where = `console <address>`).
 * Every one is checked the same way (role, then the CSRF token and the site it came from) and
 * answers 403 with why, never a redirect.
 */
export function registerActions(app: FastifyInstance, deps: ActionDeps): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16_384 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );
  if (deps.gate.hasPrincipals) registerSignIn(app, deps);
  registerHoldActions(app, deps);
  registerJobActions(app, deps);
  registerRunNow(app, deps);
}

/** The access of a request allowed to make `action` (or sign out); undefined once the refusal is sent. */
function admitted(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ActionDeps,
  action: ConsoleAction | 'logout',
): Access | undefined {
  const access = accessOf(request);
  const problem = !access
    ? 'sign in first'
    : action !== 'logout' && !deps.control
      ? 'the console is read-only here: it was started without the stores it changes'
      : postProblem(
          request,
          access,
          field(request, 'csrf'),
          action === 'logout' ? undefined : CONSOLE_ACTIONS[action],
        );
  if (!problem && access) return access;
  deps.log.info(
    { action, who: access?.principal.name, address: request.ip, problem },
    'console action refused',
  );
  const hint =
    access?.via === 'open' ? ' (NIGHTSHIFT_CONSOLE_ACTIONS=local lets the local user act on loopback)' : '';
  reply
    .code(403)
    .header('cache-control', 'no-store')
    .type('text/plain; charset=utf-8')
    .send(`${problem}${hint}\n`);
  return undefined;
}

function registerSignIn(app: FastifyInstance, deps: ActionDeps): void {
  const { gate, send, log } = deps;
  const page = { ...deps.views.page, refreshMs: 0 };
  app.get('/login', (request, reply) =>
    send(request, reply, { login: true }, (ctx) => renderLogin({ ...ctx, ...page })),
  );
  app.post('/login', (request, reply) => {
    if (crossSite(request))
      return reply
        .code(403)
        .type('text/plain; charset=utf-8')
        .send('refused: the form was sent from another site\n');
    const token = field(request, 'token');
    const found = token ? gate.principalOf(token) : undefined;
    if (!found) {
      // the address only: a mistyped token is still nearly the token
      log.info({ address: request.ip }, 'console sign-in refused');
      reply.code(401);
      return send(request, reply, { login: 'refused' }, (ctx) =>
        renderLogin({ ...ctx, ...page }, 'That token is not known here.'),
      );
    }
    const session = gate.signIn(request, reply, found.principal);
    session.flash = { ok: true, text: `Signed in as ${found.principal.name} (${found.principal.role}).` };
    log.info(
      { who: found.principal.name, role: found.principal.role, address: request.ip },
      'console sign-in',
    );
    return reply
      .code(303)
      .header('cache-control', 'no-store')
      .header('location', paths(page.base).schedules)
      .send();
  });
  app.post('/logout', (request, reply) => {
    if (!admitted(request, reply, deps, 'logout')) return reply;
    gate.signOut(request, reply);
    return reply
      .code(303)
      .header('cache-control', 'no-store')
      .header('location', paths(page.base).login)
      .send();
  });
}

function registerHoldActions(app: FastifyInstance, deps: ActionDeps): void {
  const to = paths(deps.views.page.base);
  const now = () => deps.sources.now?.() ?? new Date();
  app.post('/holds', async (request, reply) => {
    const access = admitted(request, reply, deps, 'hold');
    if (!access || !deps.control) return reply;
    const form = holdForm(request.body);
    const hold = holdFromForm(form, access.principal.name, now());
    if (typeof hold === 'string')
      return finish(reply, access, `${to.holdPreview}?${new URLSearchParams(form)}`, {
        ok: false,
        text: hold,
      });
    await placeHold(deps.control, hold, originOf(request, access));
    return finish(reply, access, to.holds, {
      ok: true,
      text: `Held ${hold.pattern} ${hold.state} until ${hold.until}: ${hold.reason}`,
    });
  });
  app.post('/holds/release', async (request, reply) => {
    const access = admitted(request, reply, deps, 'release');
    if (!access || !deps.control) return reply;
    const pattern = field(request, 'pattern');
    const problem = holdPatternProblem(pattern, { shapeOnly: true });
    if (problem) return finish(reply, access, to.holds, { ok: false, text: problem });
    const released = await releaseHold(deps.control, pattern, originOf(request, access), now());
    return finish(reply, access, to.holds, {
      ok: released !== undefined,
      text: released ? `Released the hold on ${pattern}` : `No hold on ${pattern} is in force`,
    });
  });
}

function registerJobActions(app: FastifyInstance, deps: ActionDeps): void {
  const to = paths(deps.views.page.base);
  const now = () => deps.sources.now?.() ?? new Date();
  /** A job or window of the policy in force; a message when it is not, or the policy cannot be read. */
  const unknownJob = async (job: string): Promise<string | undefined> => {
    const names = await deps.views.policyNames();
    if (typeof names === 'string') return `cannot check that "${job}" is a job: ${names}`;
    return names.has(job) ? undefined : `no job or window "${job}" in the policy in force`;
  };
  app.post('/jobs/:job/suspend', async (request, reply) => {
    const access = admitted(request, reply, deps, 'suspend');
    if (!access || !deps.control) return reply;
    const { job } = request.params as { job: string };
    const end = exceptionEnd({ for: field(request, 'for'), until: field(request, 'until') }, now(), false);
    const problem = (await unknownJob(job)) ?? (typeof end === 'string' ? end : undefined);
    if (problem) return finish(reply, access, to.schedules, { ok: false, text: problem });
    const until = end instanceof Date ? end.toISOString() : undefined;
    const reason = field(request, 'reason') || undefined;
    const changed = await suspendJob(deps.control, job, { reason, until }, originOf(request, access));
    return finish(reply, access, to.schedules, {
      ok: true,
      text: changed ? `Suspended ${job}${until ? ` until ${until}` : ''}` : `${job} was already suspended`,
    });
  });
  app.post('/jobs/:job/unsuspend', async (request, reply) => {
    const access = admitted(request, reply, deps, 'unsuspend');
    if (!access || !deps.control) return reply;
    const { job } = request.params as { job: string };
    const reason = field(request, 'reason') || undefined;
    const changed = await unsuspendJob(deps.control, job, { reason }, originOf(request, access));
    return finish(reply, access, to.schedules, {
      ok: changed,
      text: changed ? `Unsuspended ${job}` : `${job} was not suspended`,
    });
  });
  app.post('/runs/:id/cancel', async (request, reply) => {
    const access = admitted(request, reply, deps, 'cancel');
    const control = deps.control;
    if (!access || !control) return reply;
    const { id } = request.params as { id: string };
    const ports = { ...control, history: deps.sources.history };
    try {
      const result = await requestCancel(
        ports,
        id,
        { reason: field(request, 'reason') || undefined },
        originOf(request, access),
      );
      return finish(reply, access, to.run(id), cancelFlash(result));
    } catch (error) {
      if (!(error instanceof UnknownRunError || error instanceof RunAwaitingApprovalError)) throw error;
      return finish(reply, access, to.run(id), { ok: false, text: error.message });
    }
  });
  for (const verb of ['approve', 'reject'] as const)
    app.post(`/runs/:id/${verb}`, async (request, reply) => {
      const access = admitted(request, reply, deps, verb);
      const control = deps.control;
      if (!access || !control) return reply;
      const { id } = request.params as { id: string };
      const decide = verb === 'approve' ? approveRun : rejectRun;
      try {
        const result = await decide(
          control,
          id,
          { note: field(request, 'note') || undefined },
          originOf(request, access),
        );
        return finish(reply, access, to.run(id), decisionFlash(result));
      } catch (error) {
        if (!(error instanceof UnknownApprovalError || error instanceof NotAnApproverError)) throw error;
        return finish(reply, access, to.run(id), { ok: false, text: error.message });
      }
    });
}

function decisionFlash({ runId, state, decided, record }: DecisionResult): Flash {
  if (!decided)
    return state === 'expired'
      ? { ok: false, text: `${runId} expired at ${record.expiresAt} before it was decided: it ends expired` }
      : {
          ok: false,
          text: `${runId} was already ${state}${record.decision ? ` by ${record.decision.by}` : ''}`,
        };
  return state === 'approved'
    ? { ok: true, text: `Approved ${runId}: queued to act on the plan approved` }
    : { ok: true, text: `Rejected ${runId}: it ends rejected, having done nothing` };
}

/**
 * Run now: the job of the policy in force, with the form's parameters, queued as `nightshift run`
 * queues it (checked the same way, signed, in the audit trail); the answer goes to the run's page.
 * A console that cannot sign a run answers 503: a worker would refuse what it queued.
 */
function registerRunNow(app: FastifyInstance, deps: ActionDeps): void {
  const to = paths(deps.views.page.base);
  app.post('/jobs/:job/run', async (request, reply) => {
    const access = admitted(request, reply, deps, 'run');
    if (!access) return reply;
    const runNow = deps.control?.runNow;
    if (!runNow)
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(`${RUN_NOW_UNAVAILABLE}\n`);
    const { job } = request.params as { job: string };
    const origin = originOf(request, access);
    const form = runNowForm(request.body);
    const outcome = await queueFromConsole(runNow, await deps.views.currentPolicy(), job, form, origin);
    if ('problem' in outcome) {
      deps.log.info({ action: 'run', job, who: origin.who, problem: outcome.problem }, 'console run refused');
      return finish(reply, access, to.schedules, { ok: false, text: outcome.problem });
    }
    const suspended = outcome.job.suspend || (await deps.sources.suspensions.all()).has(job);
    const note = suspended ? ' The job is suspended: that stops its schedule, not this run.' : '';
    return finish(reply, access, to.run(outcome.runId), {
      ok: true,
      text: `Queued ${outcome.runId}${outcome.job.approval ? ': it waits for approval before it acts' : ''}.${note}`,
    });
  });
}
