import picomatch from 'picomatch';
import { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { Pricing } from '../policy/index.js';
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
  /** When the API accepted the pause: owned paused time counts from here. */
  pausedAt: z.iso.datetime().optional(),
  requestId: z.string().optional(),
  /** `workspace_type.typeName` when paused, and its price from the policy in force then. */
  typeName: z.string().optional(),
  pricePerHour: z.number().nonnegative().optional(),
  currency: z.string().optional(),
});
export type Ownership = z.infer<typeof OwnershipSchema>;

/** Why ownership ended. */
export const RELEASE_REASONS = ['resumed', 'seen-active', 'not-paused'] as const;
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

/** The ledger as the engine uses it; `src/store/ledger.ts` keeps it in Redis. */
export interface OwnershipLedger {
  /** Every record, by key. */
  all(): Promise<Map<string, Ownership>>;
  /** Writes a record, replacing any record of the workspace. */
  put(record: Ownership): Promise<void>;
  /**
   * Ends ownership of `key` and closes its paused interval (a confirmed record's time counts as
   * saved). With `runId`, only a record of that run is ended. Resolves to the ended record, or
   * undefined when there was none (or another run's).
   */
  end(key: string, reason: ReleaseReason, at: Date, runId?: string): Promise<Ownership | undefined>;
}

export const HOLD_STATES = ['active', 'stopped'] as const;
export type HoldState = (typeof HOLD_STATES)[number];

/** A time-boxed exception: the workspaces `pattern` matches are kept in `state` until `until`. */
export const HoldSchema = z.object({
  /** `workgroup/workspace`, each part a name, an id or a glob (`dev-*\/*`). */
  pattern: z.string(),
  state: z.enum(HOLD_STATES),
  until: z.iso.datetime(),
  reason: z.string(),
  by: z.string(),
  createdAt: z.iso.datetime(),
});
export type Hold = z.infer<typeof HoldSchema>;

/** Reads the holds in force. */
export interface HoldReader {
  /** The holds in force at `now`; with `readOnly`, the read changes nothing (no expired hold is removed). */
  active(now: Date, options?: { readOnly?: boolean }): Promise<Hold[]>;
}

/** A workspace as holds and the ledger name it. */
export interface WorkspaceNames {
  workgroupId: string;
  workgroupName?: string | undefined;
  workspaceId: string;
  workspaceName?: string | undefined;
}

/** Whether `pattern` is `workgroup/workspace` (names, ids or globs): what `hold` accepts. */
export function holdPatternProblem(pattern: string): string | undefined {
  const parts = pattern.split('/');
  if (parts.length !== 2 || parts.some((part) => part.trim() === ''))
    return `expected <workgroup>/<workspace> (names, ids or globs such as dev-*/*), got "${pattern}"`;
  return undefined;
}

interface CompiledHold {
  hold: Hold;
  group: (text: string) => boolean;
  space: (text: string) => boolean;
}

const compiledHolds = new Map<string, Omit<CompiledHold, 'hold'>>();

function compile(hold: Hold): CompiledHold {
  let parts = compiledHolds.get(hold.pattern);
  if (!parts) {
    const slash = hold.pattern.indexOf('/');
    parts = {
      group: picomatch(hold.pattern.slice(0, slash), { dot: true }),
      space: picomatch(hold.pattern.slice(slash + 1), { dot: true }),
    };
    compiledHolds.set(hold.pattern, parts);
  }
  return { hold, ...parts };
}

const either = (test: (text: string) => boolean, name: string | undefined, id: string) =>
  test(id) || (name !== undefined && test(name));

/**
 * The hold in force on each workspace asked about, for many workspaces at one instant: the
 * unexpired holds are sorted once, and which of them name a workgroup is decided once per
 * workgroup, not once per workspace (a 10,000-workspace fleet view or reconciliation asks 10,000
 * times). Answers as `holdFor` does.
 */
export function holdLookup(holds: readonly Hold[], now: Date): (ws: WorkspaceNames) => Hold | undefined {
  const live = holds
    .filter((hold) => Date.parse(hold.until) > now.getTime())
    // newest first, ties in the order given (a stable sort): the first match is the one in force
    .sort((a, b) => (a.createdAt === b.createdAt ? 0 : a.createdAt > b.createdAt ? -1 : 1))
    .map(compile);
  const byWorkgroup = new Map<string, CompiledHold[]>();
  return (ws) => {
    if (live.length === 0) return undefined;
    const key = `${ws.workgroupId}\u0000${ws.workgroupName ?? ''}`;
    let candidates = byWorkgroup.get(key);
    if (!candidates) {
      candidates = live.filter((held) => either(held.group, ws.workgroupName, ws.workgroupId));
      byWorkgroup.set(key, candidates);
    }
    return candidates.find((held) => either(held.space, ws.workspaceName, ws.workspaceId))?.hold;
  };
}

/**
 * The hold in force on a workspace: of the unexpired holds whose pattern matches it (by name or
 * id), the one placed last, so a narrower exception placed later wins over a broad one.
 */
export function holdFor(holds: readonly Hold[], ws: WorkspaceNames, now: Date): Hold | undefined {
  return holdLookup(holds, now)(ws);
}

/** How a hold reads in a target's reason: `held active until 2026-12-01T08:00:00Z by ana (customer demo)`. */
export function describeHold(hold: Hold): string {
  return `held ${hold.state} until ${hold.until} by ${hold.by} (${hold.reason})`;
}

/**
 * How long a listing may lag behind a pause or resume the API accepted: a workspace listed Active
 * this soon after nightshift paused it may only not show the pause yet.
 */
export const LISTING_LAG_MS = 10_000;

/** A run's view of the ledger, bound to its owner, run id and the prices of its policy. */
export interface RunOwnershipOptions {
  ledger: OwnershipLedger;
  owner: string;
  ownerKind: OwnerKind;
  runId: string;
  pricing: Pricing | undefined;
  log: Logger;
  now?: () => Date;
}

/**
 * What an action does with the ledger during one run. Records are read once, on first use, and
 * kept in step with the run's own writes; a step that acts on a workspace writes through at once.
 */
export class RunOwnership {
  readonly owner: string;
  readonly ownerKind: OwnerKind;
  readonly runId: string;
  readonly #options: RunOwnershipOptions;
  readonly #now: () => Date;
  #records: Promise<Map<string, Ownership>> | undefined;

  constructor(options: RunOwnershipOptions) {
    this.#options = options;
    this.owner = options.owner;
    this.ownerKind = options.ownerKind;
    this.runId = options.runId;
    this.#now = options.now ?? (() => new Date());
  }

  /** Every record of the ledger, as of this run's first read and its own writes since. */
  records(): Promise<ReadonlyMap<string, Ownership>> {
    this.#records ??= this.#options.ledger.all();
    return this.#records;
  }

  async get(key: string): Promise<Ownership | undefined> {
    return (await this.records()).get(key);
  }

  /** Written before the pause call: a crash after it leaves a record that the pause may have happened. */
  async intend(ws: SelectedWorkspace): Promise<void> {
    const typeName = ws.workspace.workspace_type?.typeName ?? undefined;
    const price = priceOf(this.#options.pricing, typeName);
    const record: Ownership = {
      key: `${ws.workgroupId}/${ws.workspaceId}`,
      workgroupId: ws.workgroupId,
      workspaceId: ws.workspaceId,
      workgroupName: ws.workgroupName,
      workspaceName: ws.workspaceName,
      owner: this.owner,
      ownerKind: this.ownerKind,
      runId: this.runId,
      state: 'intent',
      intendedAt: this.#now().toISOString(),
      ...(typeName ? { typeName } : {}),
      ...(price ? price : {}),
    };
    await this.#write(record);
  }

  /** The API accepted the pause (or the workspace shows a pause this run's intent made): owned from now. */
  async confirm(key: string, requestId: string | undefined): Promise<void> {
    const current = await this.get(key);
    if (!current || current.owner !== this.owner) return;
    if (current.state === 'confirmed') return;
    const record: Ownership = {
      ...current,
      runId: this.runId,
      state: 'confirmed',
      pausedAt: this.#now().toISOString(),
      ...(requestId ? { requestId } : {}),
    };
    await this.#write(record);
    this.#options.log.info(
      { workspaceId: record.workspaceId, owner: this.owner, requestId },
      'ownership confirmed: nightshift paused it',
    );
  }

  /** This run's intent was not carried out (the API refused, and the workspace is not pausing). */
  async abandon(key: string): Promise<void> {
    const current = await this.get(key);
    if (!current || current.runId !== this.runId || current.state !== 'intent') return;
    await this.#end(key, 'not-paused', current.runId);
  }

  /** Ownership ends: nightshift resumed the workspace. */
  async resumed(key: string): Promise<void> {
    if (await this.get(key)) await this.#end(key, 'resumed');
  }

  /**
   * The workspace was listed Active (or coming up) at `listedAt`: whoever started it, nobody owns
   * its pause any more. A record newer than the listing allows for is kept: the listing may only
   * not show the pause yet.
   */
  async seenActive(key: string, listedAt: Date): Promise<boolean> {
    const current = await this.get(key);
    if (!current) return false;
    const touched = Date.parse(current.pausedAt ?? current.intendedAt);
    if (listedAt.getTime() - touched < LISTING_LAG_MS) return false;
    await this.#end(key, 'seen-active');
    return true;
  }

  async #end(key: string, reason: ReleaseReason, runId?: string): Promise<void> {
    const ended = await this.#options.ledger.end(key, reason, this.#now(), runId);
    (await this.#mutable()).delete(key);
    if (ended)
      this.#options.log.info(
        { workspaceId: ended.workspaceId, owner: ended.owner, reason },
        'ownership ended',
      );
  }

  async #write(record: Ownership): Promise<void> {
    await this.#options.ledger.put(record);
    (await this.#mutable()).set(record.key, record);
  }

  async #mutable(): Promise<Map<string, Ownership>> {
    this.#records ??= this.#options.ledger.all();
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
  return { all: () => ledger.all(), put: refuse, end: refuse };
}

/** An in-process ledger: for tests, and for runs that share one process with their readers. */
export class MemoryOwnershipLedger implements OwnershipLedger {
  readonly records = new Map<string, Ownership>();
  readonly intervals: PausedInterval[] = [];

  async all(): Promise<Map<string, Ownership>> {
    return new Map(this.records);
  }

  async put(record: Ownership): Promise<void> {
    this.records.set(record.key, record);
  }

  async end(key: string, reason: ReleaseReason, at: Date, runId?: string): Promise<Ownership | undefined> {
    const record = this.records.get(key);
    if (!record || (runId !== undefined && record.runId !== runId)) return undefined;
    this.records.delete(key);
    const interval = pausedInterval(record, reason, at);
    if (interval) this.intervals.push(interval);
    return record;
  }
}

/** The paused stretch a confirmed record closes when its ownership ends; none for an intent. */
export function pausedInterval(
  record: Ownership,
  reason: ReleaseReason,
  at: Date,
): PausedInterval | undefined {
  if (record.state !== 'confirmed' || !record.pausedAt) return undefined;
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
    from: record.pausedAt,
    to: new Date(Math.max(at.getTime(), Date.parse(record.pausedAt))).toISOString(),
    endedBy: reason,
  };
}
