import type { Dispatcher } from 'undici';
import { undici } from '../api/index.js';
import type { Finding, RunSummary } from '../engine/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import type { NotificationSink, NotifyEvent, PolicyJob } from '../policy/index.js';
import { isStranded, runChange } from './events.js';
import { formatNotification, type Notification, runLink } from './format.js';
import type { NotificationMemory } from './memory.js';
import type { OverdueNotice } from './overdue.js';
import { formatOverdueNotice, jobRunsLink } from './overdue-format.js';
import { formatPolicyNotice, type PolicyNotice } from './policy-format.js';
import {
  type Delivery,
  postWebhook,
  scrubUrl,
  WEBHOOK_DEFAULTS,
  WebhookError,
  type WebhookRetryOptions,
} from './webhook.js';

export interface NotifierOptions extends WebhookRetryOptions {
  /** What each sink was last told: RedisNotificationMemory for the engine, InMemory for `--inline`. */
  memory: NotificationMemory;
  /** Where sends and failures are logged, by sink name. Default: nowhere. */
  log?: Logger;
  /** The undici dispatcher for webhooks. Default: a keep-alive Agent the notifier owns and closes. */
  dispatcher?: Dispatcher;
  /** The console's address (`NIGHTSHIFT_CONSOLE_URL`): each message links to its run's page there. Default: no link. */
  consoleUrl?: string | undefined;
}

/** What happened for one sink of the job. */
export interface SinkReport {
  readonly sink: string;
  /**
   * - `sent`: the sink got a message for `events`.
   * - `quiet`: nothing it listens to happened; its memory moved on.
   * - `unchanged`: the run says nothing (dry, skipped, missed, or already notified); memory untouched.
   * - `failed`: the message was not delivered; its memory stays, so the next run tries again.
   * - `undefined`: the policy has no sink of that name (only for a job that bypassed validation).
   */
  readonly result: 'sent' | 'quiet' | 'unchanged' | 'failed' | 'undefined';
  /** The events the sink listens to that the run raised. */
  readonly events: readonly NotifyEvent[];
  readonly attempts?: number;
}

/** The sinks a job reports to, by name, as `Policy.notifications` holds them. */
export type NotificationSinks = Readonly<Record<string, NotificationSink>>;

function checkPositive(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
    throw new RangeError(`Notifier: ${name} must be a positive integer, got ${value}`);
}

/**
 * Tells a job's sinks about its finished runs. `notify` never throws and never fails a run: a
 * sink that is down is logged (by its name, never its URL) and tried again on the next run.
 */
export class Notifier {
  readonly #memory: NotificationMemory;
  readonly #log: Logger;
  readonly #retry: Required<WebhookRetryOptions>;
  /** The one given, else the Agent made for the first webhook sent (none, for a process that never sends one). */
  #dispatcher: Dispatcher | undefined;
  readonly #ownsDispatcher: boolean;
  readonly #closing = new AbortController();
  readonly #consoleUrl: string | undefined;

  constructor(options: NotifierOptions) {
    checkPositive('attempts', options.attempts);
    checkPositive('backoffMs', options.backoffMs);
    checkPositive('maxDelayMs', options.maxDelayMs);
    this.#memory = options.memory;
    this.#log = options.log ?? silentLogger;
    this.#retry = {
      attempts: options.attempts ?? WEBHOOK_DEFAULTS.attempts,
      backoffMs: options.backoffMs ?? WEBHOOK_DEFAULTS.backoffMs,
      maxDelayMs: options.maxDelayMs ?? WEBHOOK_DEFAULTS.maxDelayMs,
    };
    this.#consoleUrl = options.consoleUrl;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher = options.dispatcher;
  }

  #webhookDispatcher(): Dispatcher {
    // HTTP/1.1 as before undici 8, which would negotiate HTTP/2: the delivery tests speak nothing else
    this.#dispatcher ??= new (undici().Agent)({
      allowH2: false,
      keepAliveTimeout: 10_000,
      connect: { timeout: 10_000 },
    });
    return this.#dispatcher;
  }

  /**
   * Sends what `summary` changed to each sink the job names (`job.notify`), in parallel. Each sink
   * gets the events it listens to (`on:`); its memory moves on only once it has them. Dry runs
   * notify nobody. Resolves when every sink is done, with one report per sink.
   */
  async notify(
    notifications: NotificationSinks,
    job: Pick<PolicyJob, 'name' | 'notify'>,
    summary: RunSummary,
  ): Promise<SinkReport[]> {
    if (summary.dryRun || job.notify.length === 0) return [];
    const log = this.#log.child({ job: job.name, runId: summary.runId });
    const names = [...new Set(job.notify)];
    return Promise.all(
      names.map(async (name): Promise<SinkReport> => {
        try {
          return await this.#notifySink(name, notifications[name], job.name, summary, log);
        } catch (error) {
          // Reading or writing the memory (Redis down) is what gets here; the run goes on regardless.
          log.error(
            { sink: name, reason: describe(error) },
            'notification skipped: it could not be prepared',
          );
          return { sink: name, result: 'failed', events: [] };
        }
      }),
    );
  }

  /**
   * Tells the sinks of the policy in force about the policy itself, in parallel: a rejected edit
   * goes to the sinks that listen to `failure`, the fix after it to those that listen to
   * `recovered`, as for runs. Never throws; resolves with one report per sink told.
   */
  async notifyPolicy(notifications: NotificationSinks, notice: PolicyNotice): Promise<SinkReport[]> {
    const event: NotifyEvent = notice.event === 'rejected' ? 'failure' : 'recovered';
    const log = this.#log.child({ policyEvent: notice.event, rejectedSha: notice.rejectedSha });
    const sinks = Object.entries(notifications).filter(([, sink]) => sink.on.includes(event));
    const body = (format: NotificationSink['format']) => formatPolicyNotice(format, notice);
    return this.#broadcast(sinks, { event, what: 'policy notification', body }, log);
  }

  /**
   * Tells a job's sinks that listen to `overdue` that it is overdue, or no longer (`cleared`),
   * in parallel, with a link to its runs in the console. Never throws; one report per sink told.
   */
  async notifyOverdue(
    notifications: NotificationSinks,
    job: Pick<PolicyJob, 'name' | 'notify'>,
    notice: OverdueNotice,
  ): Promise<SinkReport[]> {
    const log = this.#log.child({ job: job.name, overdueEvent: notice.event });
    const sinks = [...new Set(job.notify)].flatMap((name) => {
      const sink = notifications[name];
      return sink?.on.includes('overdue') ? [[name, sink] as const] : [];
    });
    const link = this.#consoleUrl === undefined ? undefined : jobRunsLink(this.#consoleUrl, job.name);
    const body = (format: NotificationSink['format']) => formatOverdueNotice(format, notice, link);
    return this.#broadcast(sinks, { event: 'overdue', what: 'overdue notification', body }, log);
  }

  /** Sends one body per sink (by its format), each logged as `<what> sent` by the sink's name; never throws. */
  async #broadcast(
    sinks: readonly (readonly [string, NotificationSink])[],
    message: { event: NotifyEvent; what: string; body: (format: NotificationSink['format']) => unknown },
    log: Logger,
  ): Promise<SinkReport[]> {
    const { event, what, body } = message;
    return Promise.all(
      sinks.map(async ([name, sink]): Promise<SinkReport> => {
        try {
          const delivery = await postWebhook(
            { name, url: sink.url, timeoutMs: sink.timeout },
            body(sink.format),
            { ...this.#retry, dispatcher: this.#webhookDispatcher(), signal: this.#closing.signal, log },
          );
          log.info({ sink: name, attempts: delivery.attempts }, `${what} sent`);
          return { sink: name, result: 'sent', events: [event], attempts: delivery.attempts };
        } catch (error) {
          log.error({ sink: name, ...failure(error, sink.url) }, `${what} not sent`);
          return { sink: name, result: 'failed', events: [event] };
        }
      }),
    );
  }

  /** Stops sends in progress (their sinks are tried again on the next run) and closes connections. */
  async close(): Promise<void> {
    this.#closing.abort();
    if (this.#ownsDispatcher) await this.#dispatcher?.close();
  }

  async #notifySink(
    name: string,
    sink: NotificationSink | undefined,
    jobName: string,
    summary: RunSummary,
    log: Logger,
  ): Promise<SinkReport> {
    if (!sink) {
      log.error({ sink: name }, 'notification skipped: no such sink in the policy');
      return { sink: name, result: 'undefined', events: [] };
    }
    const previous = await this.#memory.get(jobName, name);
    const change = runChange(summary, previous);
    if (!change) return { sink: name, result: 'unchanged', events: [] };
    const events = change.events.filter((event) => sink.on.includes(event));
    // A sink deaf to findings is told none, so it keeps none (should it start listening, it hears
    // about every open finding); but those it hears of as stranded workspaces, so each is told once.
    const heard = (finding: Finding) =>
      sink.on.includes('findings') || (sink.on.includes('stranded') && isStranded(finding));
    const next = change.next && { ...change.next, findings: change.next.findings.filter(heard) };
    if (events.length === 0) {
      if (next) await this.#memory.set(jobName, name, next);
      log.debug({ sink: name, raised: change.events }, 'nothing to notify');
      return { sink: name, result: 'quiet', events };
    }
    const notification: Notification = {
      events,
      summary,
      previousOutcome: change.previousOutcome,
      newFindings: change.newFindings.filter(heard),
      resolvedFindings: change.resolvedFindings.filter(heard),
      window: change.window,
      link: this.#consoleUrl === undefined ? undefined : runLink(this.#consoleUrl, summary.runId),
    };
    let delivery: Delivery;
    try {
      delivery = await postWebhook(
        { name, url: sink.url, timeoutMs: sink.timeout },
        formatNotification(sink.format, notification),
        { ...this.#retry, dispatcher: this.#webhookDispatcher(), signal: this.#closing.signal, log },
      );
    } catch (error) {
      log.error(
        { sink: name, events, ...failure(error, sink.url) },
        'notification not sent; the next run tries again',
      );
      return {
        sink: name,
        result: 'failed',
        events,
        ...(error instanceof WebhookError ? { attempts: error.attempts } : {}),
      };
    }
    const sent = {
      sink: name,
      events,
      newFindings: notification.newFindings.length,
      resolvedFindings: notification.resolvedFindings.length,
      attempts: delivery.attempts,
    };
    try {
      if (next) await this.#memory.set(jobName, name, next);
    } catch (error) {
      log.error(
        { ...sent, reason: describe(error) },
        'notification sent but not remembered; the next run may repeat it',
      );
      return { sink: name, result: 'sent', events, attempts: delivery.attempts };
    }
    log.info(sent, 'notification sent');
    return { sink: name, result: 'sent', events, attempts: delivery.attempts };
  }
}

/** Why a send failed, for the log: never the sink's URL. */
function failure(error: unknown, url: string): Record<string, unknown> {
  return error instanceof WebhookError
    ? { code: error.code, status: error.status, attempts: error.attempts, reason: error.detail.reason }
    : { reason: scrubUrl(describe(error), url) };
}

/** An error as one line, without its stack (which could carry request details). */
function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
