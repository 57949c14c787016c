import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { Pricing } from '../policy/index.js';
import { type Clock, systemClock } from '../time/index.js';
import type { SelectedWorkspace } from './targets.js';

/**
 * The ownership ledger: which paused workspaces nightshift paused itself, and so may resume.
 * A record is written as an intent before the pause call and confirmed after it, so a run that
 * takes over from a dead worker can tell its own pauses from anyone else's.
 */

/** What owns a pause: a job's name, or a window's (names are unique across both). */
export const OWNER_KINDS = ['job', 'window'] as const;
export type OwnerKind = (typeof OWNER_KINDS)[number];

export const OwnershipSchema = z.object({
  /** `workgroupId/workspaceId`, as target keys are. */
  key: z.string(),
  workgroupId: z.string(),
  workspaceId: z.string(),
  workgroupName: z.string().optional(),
  workspaceName: z.string().optional(),
  owner: z.string(),
  ownerKind: z.enum(OWNER_KINDS),
  /** The run that paused it (or means to). */
  runId: z.string(),
  /** `intent`: the pause is about to be (or was) sent, not yet confirmed; `confirmed`: the API accepted it. */
  state: z.enum(['intent', 'confirmed']),
  intendedAt: z.iso.datetime(),
  /**
   * Names one intent, so that a late write of an execution that has stopped (a command Redis
   * receives after an outage) can never end a newer intent of the same run.
   */
  intentId: z.string().optional(),
  /** The ledger's sequence when the intent was written (absent on records of older versions: 0). */
  intentSeq: z.number().int().nonnegative().optional(),
  /** When the API accepted the pause: owned paused time counts from here. */
  pausedAt: z.iso.datetime().optional(),
  requestId: z.string().optional(),
  /** The ledger's sequence when the confirmation was written: after the API's answer arrived. */
  confirmSeq: z.number().int().nonnegative().optional(),
  /** Taken back by `nightshift adopt` from the pause journal, and when. */
  adoptedAt: z.iso.datetime().optional(),
  /** `workspace_type.typeName` when paused, and its price from the policy in force then. */
  typeName: z.string().optional(),
  pricePerHour: z.number().nonnegative().optional(),
  currency: z.string().optional(),
});
export type Ownership = z.infer<typeof OwnershipSchema>;

/**
 * Why ownership ended: nightshift resumed it; a listing asked for after the pause was answered
 * showed it running (someone else started it); a listing asked for once the intent's calls were
 * over showed it running (the pause never took); the API refused the pause and nothing of this
 * owner's had paused it.
 */
export const RELEASE_REASONS = ['resumed', 'seen-active', 'not-paused', 'refused'] as const;
export type ReleaseReason = (typeof RELEASE_REASONS)[number];

/** A stretch of time a workspace spent paused by nightshift: what savings are made of. */
export const PausedIntervalSchema = OwnershipSchema.pick({
  key: true,
  workgroupId: true,
  workspaceId: true,
  workgroupName: true,
  workspaceName: true,
  owner: true,
  ownerKind: true,
  typeName: true,
  pricePerHour: true,
  currency: true,
}).extend({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  endedBy: z.enum(RELEASE_REASONS),
});
export type PausedInterval = z.infer<typeof PausedIntervalSchema>;

/** What `intend` found and did. */
export type IntendOutcome =
  /** The intent is written; `prior` is an intent of the same owner it replaced (an earlier try whose answer is unknown). */
  | { written: true; record: Ownership; prior: Ownership | undefined }
  /** Nothing written: the workspace has a confirmed pause, or another owner's record (a concurrent writer). */
  | { written: false; prior: Ownership };

/** Conditions under which `end` ends a record; a record that meets none of them is left as it is. */
export interface EndCondition {
  /** Only a record of this run. */
  runId?: string;
  /** Only this intent (see `Ownership.intentId`). */
  intentId?: string | undefined;
  /** Only a record in this state. */
  state?: Ownership['state'];
  /**
   * The record as the caller has it: the ledger may end it without reading it first, if the
   * stored one is still it (the same intent in the same state).
   */
  record?: Ownership | undefined;
}

/**
 * The ledger as the engine uses it; `src/store/ledger.ts` keeps it in Redis. Beside the records
 * it keeps a journal of every pause nightshift sent: the last pause record of each workspace, kept
 * until nightshift resumes it or sees it running, whatever becomes of the ledger's record. A
 * workspace that is stopped, not owned, and in the journal was stranded (see `strandedOf`).
 */
export interface OwnershipLedger {
  /** Every record, by key. */
  all(): Promise<Map<string, Ownership>>;
  /** The records of `keys` that exist, by key. */
  some(keys: readonly string[]): Promise<Map<string, Ownership>>;
  /**
   * The ledger's sequence now. It moves on with every intent and confirmation, atomically with
   * the write, so a listing asked for after reading `n` is later than every write numbered up to
   * `n`: that is how a listing is ordered against the pauses (see `judgeRunning`).
   */
  sequence(): Promise<number>;
  /**
   * Writes `record` (an intent) with the next sequence number unless the workspace has a record
   * other than an intent of the same owner, in one step.
   */
  intend(record: Ownership): Promise<IntendOutcome>;
  /**
   * Confirms the intent of `owner` on `key`: the API accepted a pause of it, or a listing shows the
   * pause it intended. Resolves with the confirmed record; undefined when there was no intent of
   * that owner (already confirmed, ended, or another owner's).
   */
  confirm(key: string, owner: string, confirmation: Confirmation): Promise<Ownership | undefined>;
  /**
   * Ends ownership of `key` and closes its paused interval (a confirmed record's time counts as
   * saved, and an intent's that ended by nightshift's resume). Resolves to the ended record, or
   * undefined when there was none or it did not meet `condition`.
   */
  end(key: string, reason: ReleaseReason, at: Date, condition?: EndCondition): Promise<Ownership | undefined>;
  /** Writes a record whole, replacing any record of the workspace (`nightshift adopt`, tests). */
  put(record: Ownership): Promise<void>;
  /** The journal's entries: of `keys`, or every one. */
  journal(keys?: readonly string[]): Promise<Map<string, Ownership>>;
}

/** What `OwnershipLedger.confirm` records. */
export interface Confirmation {
  pausedAt: string;
  requestId?: string | undefined;
  /**
   * The intent as the caller has it: when the stored record is still this intent, the confirmed
   * record is made from it instead of being read back (a parse a pause).
   */
  intent?: Ownership | undefined;
}

/** `intent` as `confirmation` confirms it, numbered `confirmSeq`: what the ledger stores. */
export function confirmedRecord(
  intent: Ownership,
  confirmation: Confirmation,
  confirmSeq: number,
): Ownership {
  return {
    ...intent,
    state: 'confirmed',
    pausedAt: confirmation.pausedAt,
    ...(confirmation.requestId ? { requestId: confirmation.requestId } : {}),
    confirmSeq,
  };
}

/** When a listing was asked for, in the orders the ledger's rules compare. */
export interface ListingStamp {
  /** The ledger's sequence read just before the listing was asked for; undefined without a ledger. */
  seq: number | undefined;
  /** Of the listings this run asked for, the how-manieth (in-process order, see `FleetView`). */
  generation: number;
}

/**
 * What a listing that shows a workspace running says about a record of its pause:
 * - `undone`: the pause was answered before the listing was asked for: someone started it since;
 * - `never-took`: an intent whose calls are over (this run's own, or a run of its owner that
 *   holds the owner's run lock) and a listing asked for after it: the pause never took;
 * - `unknown`: the listing may predate the pause, or a call of the intent may still be under way.
 */
export type RunningVerdict = 'undone' | 'never-took' | 'unknown';

/**
 * The causal rule of ownership, which never compares clocks: a listing is ordered against a
 * record by the ledger's sequence (read before the listing was asked for, written atomically with
 * the record). `callsOver` says whether every call of an intent that is not this run's has ended:
 * true for a run that holds its owner's run lock (another run of the owner stopped acting before
 * its lease could expire, see docs/engine.md).
 */
export function judgeRunning(
  record: Ownership,
  listing: ListingStamp,
  context: { runId: string; owner: string; callsOver: boolean },
): RunningVerdict {
  if (listing.seq === undefined) return 'unknown';
  if (record.state === 'confirmed') return (record.confirmSeq ?? 0) <= listing.seq ? 'undone' : 'unknown';
  if ((record.intentSeq ?? 0) > listing.seq) return 'unknown';
  const over = record.runId === context.runId || (context.callsOver && record.owner === context.owner);
  return over ? 'never-took' : 'unknown';
}

/** A run's view of the ledger, bound to its owner, run id and the prices of its policy. */
export interface RunOwnershipOptions {
  ledger: OwnershipLedger;
  owner: string;
  ownerKind: OwnerKind;
  runId: string;
  /** The workspaces the run acts on: the records it reads are theirs. */
  keys: readonly string[];
  pricing: Pricing | undefined;
  log: Logger;
  /**
   * The run holds its owner's run lock: any other run of the owner has stopped acting, so an
   * intent of one that a later listing shows running never took. Default false.
   */
  exclusive?: boolean;
  /** Where recorded times are read. Default: the system's. */
  clock?: Clock;
}

/**
 * What an action does with the ledger during one run. The records of the run's workspaces are read
 * once, on first use, and kept in step with the run's own writes; a step that acts on a workspace
 * writes through at once.
 * Every write is conditional in Redis, so a record some other writer changed meanwhile is never
 * overwritten by this run's stale view of it.
 */
export class RunOwnership {
  readonly owner: string;
  readonly ownerKind: OwnerKind;
  readonly runId: string;
  readonly #options: RunOwnershipOptions;
  readonly #clock: Clock;
  #records: Promise<Map<string, Ownership>> | undefined;
  /** Intent ids: unique to this run's view of the ledger, then counted (a UUID each costs more than the write). */
  readonly #intentIds = { prefix: randomUUID(), next: 0 };

  constructor(options: RunOwnershipOptions) {
    this.#options = options;
    this.owner = options.owner;
    this.ownerKind = options.ownerKind;
    this.runId = options.runId;
    this.#clock = options.clock ?? systemClock;
  }

  /** The records of the run's workspaces, as of this run's first read and its own writes since. */
  records(): Promise<ReadonlyMap<string, Ownership>> {
    return this.#mutable();
  }

  /** Forgets what this run read, so the next read asks the ledger again (after other executions wrote). */
  refresh(): void {
    this.#records = undefined;
  }

  async get(key: string): Promise<Ownership | undefined> {
    return (await this.records()).get(key);
  }

  /** The pause journal's entries of `keys` (see `OwnershipLedger`), read now. */
  journal(keys: readonly string[]): Promise<Map<string, Ownership>> {
    return this.#options.ledger.journal(keys);
  }

  /** The rule of `judgeRunning` for a record of this ledger, as this run sees it. */
  judge(record: Ownership, listing: ListingStamp): RunningVerdict {
    return judgeRunning(record, listing, {
      runId: this.runId,
      owner: this.owner,
      callsOver: this.#options.exclusive === true,
    });
  }

  /**
   * Written before the pause call: a crash after it leaves a record that the pause may have
   * happened. An intent of this owner already there (an earlier try whose answer is unknown) is
   * replaced and returned as `prior`: a pause found made after this one is then this owner's.
   */
  async intend(ws: SelectedWorkspace): Promise<IntendOutcome> {
    const typeName = ws.workspace.workspace_type?.typeName ?? undefined;
    const price = priceOf(this.#options.pricing, typeName);
    const outcome = await this.#options.ledger.intend({
      key: `${ws.workgroupId}/${ws.workspaceId}`,
      workgroupId: ws.workgroupId,
      workspaceId: ws.workspaceId,
      workgroupName: ws.workgroupName,
      workspaceName: ws.workspaceName,
      owner: this.owner,
      ownerKind: this.ownerKind,
      runId: this.runId,
      state: 'intent',
      intendedAt: new Date(this.#clock.now()).toISOString(),
      intentId: `${this.#intentIds.prefix}.${this.#intentIds.next++}`,
      ...(typeName ? { typeName } : {}),
      ...(price ? price : {}),
    });
    const records = await this.#mutable();
    if (outcome.written) records.set(outcome.record.key, outcome.record);
    else records.set(outcome.prior.key, outcome.prior);
    return outcome;
  }

  /**
   * The API accepted the pause, or a listing shows the pause this owner's intent made: owned from
   * `pausedAt` (default now; a pause only a listing shows is owned from its intent).
   */
  async confirm(key: string, requestId: string | undefined, pausedAt?: string): Promise<void> {
    const records = await this.#mutable();
    const record = await this.#options.ledger.confirm(key, this.owner, {
      pausedAt: pausedAt ?? new Date(this.#clock.now()).toISOString(),
      requestId,
      intent: records.get(key),
    });
    if (!record) return;
    records.set(key, record);
    // at debug: the pause call's own line names the workspace and request ID, once a target
    this.#options.log.debug(
      { workspaceId: record.workspaceId, owner: this.owner, requestId: record.requestId },
      'ownership confirmed: nightshift paused it',
    );
  }

  /** The API refused this run's pause and nothing of this owner's paused it: its intent ends. */
  async refused(key: string, intent: Ownership): Promise<void> {
    await this.#end(key, 'refused', { runId: this.runId, intentId: intent.intentId, state: 'intent' });
  }

  /** Ownership ends: nightshift resumed the workspace. */
  async resumed(key: string): Promise<void> {
    if (await this.get(key)) await this.#end(key, 'resumed');
  }

  /**
   * A listing shows the workspace running (or coming up): by `judgeRunning`, ownership ends when
   * the pause was undone or never took, and is kept while unknown. Resolves with the verdict.
   */
  async seenRunning(key: string, listing: ListingStamp): Promise<RunningVerdict | undefined> {
    const record = await this.get(key);
    if (!record) return undefined;
    const verdict = this.judge(record, listing);
    if (verdict === 'undone') await this.#end(key, 'seen-active', { intentId: record.intentId });
    if (verdict === 'never-took')
      await this.#end(key, 'not-paused', { intentId: record.intentId, state: 'intent' });
    return verdict;
  }

  async #end(key: string, reason: ReleaseReason, condition?: EndCondition): Promise<void> {
    const record = (await this.#mutable()).get(key);
    const ended = await this.#options.ledger.end(key, reason, new Date(this.#clock.now()), {
      ...condition,
      record,
    });
    if (ended) (await this.#mutable()).delete(key);
    if (ended)
      this.#options.log.info(
        { workspaceId: ended.workspaceId, owner: ended.owner, reason },
        'ownership ended',
      );
  }

  #mutable(): Promise<Map<string, Ownership>> {
    this.#records ??= this.#options.ledger.some(this.#options.keys);
    return this.#records;
  }
}

/** The price of an hour of `typeName` under `pricing`, if the policy has a price table. */
export function priceOf(
  pricing: Pricing | undefined,
  typeName: string | undefined,
): { pricePerHour: number; currency: string } | undefined {
  if (!pricing) return undefined;
  const perHour = (typeName === undefined ? undefined : pricing.perHour[typeName]) ?? pricing.default;
  return perHour === undefined ? undefined : { pricePerHour: perHour, currency: pricing.currency };
}

/** A ledger that reads and refuses to write: what a dry run (plan) gets, so it cannot change ownership. */
export function readOnlyLedger(ledger: OwnershipLedger): OwnershipLedger {
  const refuse = async (): Promise<never> => {
    throw new Error('a dry run must not change the ownership ledger');
  };
  return {
    all: () => ledger.all(),
    some: (keys) => ledger.some(keys),
    sequence: () => ledger.sequence(),
    journal: (keys) => ledger.journal(keys),
    intend: refuse,
    confirm: refuse,
    end: refuse,
    put: refuse,
  };
}

/** Whether `record` meets `condition` (see `OwnershipLedger.end`). */
export function meets(record: Ownership, condition: EndCondition): boolean {
  if (condition.runId !== undefined && record.runId !== condition.runId) return false;
  if (condition.state !== undefined && record.state !== condition.state) return false;
  return condition.intentId === undefined || record.intentId === condition.intentId;
}

/**
 * Whether ending `record` for `reason` clears the journal's entry of its workspace: a workspace
 * handed back or seen running leaves nothing to strand; a refused pause clears only the intent
 * that was refused, never a pause the API accepted.
 */
export function journalEndsWith(
  entry: Ownership | undefined,
  record: Ownership,
  reason: ReleaseReason,
): boolean {
  if (!entry) return false;
  if (reason !== 'refused') return true;
  return entry.state === 'intent' && entry.intentId === record.intentId;
}

/**
 * The paused stretch a record closes when its ownership ends: a confirmed one from its pause; an
 * intent that nightshift's resume ended from the intent (the resume proves the pause took, though
 * its answer was lost); none for any other intent.
 */
export function pausedInterval(
  record: Ownership,
  reason: ReleaseReason,
  at: Date,
): PausedInterval | undefined {
  const from =
    record.state === 'confirmed' ? record.pausedAt : reason === 'resumed' ? record.intendedAt : undefined;
  if (!from) return undefined;
  const { key, workgroupId, workspaceId, workgroupName, workspaceName, owner, ownerKind } = record;
  return {
    key,
    workgroupId,
    workspaceId,
    ...(workgroupName === undefined ? {} : { workgroupName }),
    ...(workspaceName === undefined ? {} : { workspaceName }),
    owner,
    ownerKind,
    ...(record.typeName === undefined ? {} : { typeName: record.typeName }),
    ...(record.pricePerHour === undefined ? {} : { pricePerHour: record.pricePerHour }),
    ...(record.currency === undefined ? {} : { currency: record.currency }),
    from,
    to: new Date(Math.max(at.getTime(), Date.parse(from))).toISOString(),
    endedBy: reason,
  };
}
