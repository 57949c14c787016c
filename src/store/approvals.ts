import { CHECKPOINT_TTL_MS } from '../config/index.js';
import { type ApprovalRecord, ApprovalRecordSchema } from '../engine/index.js';
import { parseJson } from './json.js';
import { COMPARE_AND_SET_FIELD } from './lua.js';
import { RedisStore } from './redis-store.js';

/** Why a decision could not be taken: the approval is gone, decided already, or past its time. */
export type DecisionRefusal =
  | { refused: 'unknown' }
  | { refused: 'decided'; record: ApprovalRecord }
  | { refused: 'expired'; record: ApprovalRecord };

function readRecord(text: string | null): ApprovalRecord | undefined {
  if (text === null) return undefined;
  const parsed = ApprovalRecordSchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}

/**
 * Runs waiting for a person's approval, and those approved until their run acts: one record per
 * run, moved from state to state only from the state it was read in, so two people deciding at
 * once (or a decision and the expiry) cannot both win.
 */
export class Approvals extends RedisStore {
  /** Asks for an approval (a new round replaces the run's earlier one). */
  async request(record: ApprovalRecord): Promise<void> {
    const parsed = ApprovalRecordSchema.parse(record);
    await this.redis.hset(this.keys.approvals, parsed.runId, JSON.stringify(parsed));
  }

  async get(runId: string): Promise<ApprovalRecord | undefined> {
    return readRecord(await this.redis.hget(this.keys.approvals, runId));
  }

  /** Every run waiting for (or approved and not yet run), oldest request first. */
  async all(): Promise<ApprovalRecord[]> {
    const fields = await this.redis.hgetall(this.keys.approvals);
    return Object.values(fields)
      .flatMap((text) => readRecord(text) ?? [])
      .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  }

  /**
   * Decides a pending approval of `round` (approved or rejected, by whom, with a note), unless it
   * has expired by now: then it is marked expired, and the refusal says so.
   */
  async decide(
    runId: string,
    round: number | undefined,
    decision: { state: 'approved' | 'rejected'; by: string; note?: string | undefined },
  ): Promise<ApprovalRecord | DecisionRefusal> {
    for (;;) {
      const text = await this.redis.hget(this.keys.approvals, runId);
      const record = readRecord(text);
      if (!record || text === null) return { refused: 'unknown' };
      if (record.state !== 'pending' || (round !== undefined && record.round !== round))
        return { refused: 'decided', record };
      const now = this.clock.now();
      const expired = Date.parse(record.expiresAt) <= now;
      const next: ApprovalRecord = expired
        ? { ...record, state: 'expired' }
        : {
            ...record,
            state: decision.state,
            decision: {
              by: decision.by,
              at: new Date(now).toISOString(),
              ...(decision.note ? { note: decision.note } : {}),
            },
          };
      if (await this.#swap(runId, text, next)) return expired ? { refused: 'expired', record: next } : next;
    }
  }

  /** Marks a pending approval of `round` expired; the record if this call did, else undefined. */
  async expire(runId: string, round: number): Promise<ApprovalRecord | undefined> {
    for (;;) {
      const text = await this.redis.hget(this.keys.approvals, runId);
      const record = readRecord(text);
      if (!record || text === null || record.state !== 'pending' || record.round !== round) return undefined;
      const next: ApprovalRecord = { ...record, state: 'expired' };
      if (await this.#swap(runId, text, next)) return next;
    }
  }

  /** Forgets a run's approval once the run has ended (acted, been rejected or expired). */
  async forget(runId: string): Promise<void> {
    await this.redis.hdel(this.keys.approvals, runId);
  }

  async #swap(runId: string, old: string, next: ApprovalRecord): Promise<boolean> {
    const set = await COMPARE_AND_SET_FIELD.run(
      this.redis,
      [this.keys.approvals],
      [runId, '1', old, JSON.stringify(next)],
    );
    if (set === 1) await this.redis.pexpire(this.keys.approvals, CHECKPOINT_TTL_MS);
    return set === 1;
  }
}
