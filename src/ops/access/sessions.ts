import { randomBytes } from 'node:crypto';
import type { Principal } from './principals.js';

/** One signed-in browser. */
export interface Session {
  /** The cookie's value: 256 random bits, known to this process and that browser only. */
  readonly id: string;
  readonly principal: Principal;
  /** The synchronizer token every form of this session carries. */
  readonly csrf: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** What the last action said, shown once by the page it redirected to. */
  flash?: { readonly text: string; readonly ok: boolean } | undefined;
}

export interface SessionOptions {
  /** A session unused this long ends. Default 2 hours. */
  idleMs?: number;
  /** A session ends this long after sign-in, used or not. Default 12 hours. */
  maxAgeMs?: number;
  /** Most sessions at once; the oldest ends when one more signs in. Default 10 000. */
  maxSessions?: number;
  /** The clock, epoch ms. Default Date.now. */
  now?: () => number;
}

export const SESSION_DEFAULTS = { idleMs: 2 * 3_600_000, maxAgeMs: 12 * 3_600_000, maxSessions: 10_000 };

/**
 * Sessions kept in this process's memory, not in a signed cookie: signing out or a restart ends them
 * for good (a copied cookie is worthless after either), and no signing key needs managing. The cost:
 * a console behind a load balancer needs sticky sessions, or bearer tokens.
 */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #idleMs: number;
  readonly #maxAgeMs: number;
  readonly #maxSessions: number;
  readonly #now: () => number;

  constructor(options: SessionOptions = {}) {
    this.#idleMs = options.idleMs ?? SESSION_DEFAULTS.idleMs;
    this.#maxAgeMs = options.maxAgeMs ?? SESSION_DEFAULTS.maxAgeMs;
    this.#maxSessions = options.maxSessions ?? SESSION_DEFAULTS.maxSessions;
    this.#now = options.now ?? Date.now;
  }

  /** How long a new session's cookie may live, in seconds. */
  get cookieMaxAgeSeconds(): number {
    return Math.floor(this.#maxAgeMs / 1000);
  }

  create(principal: Principal): Session {
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (this.#expired(session, now)) this.#sessions.delete(id);
    while (this.#sessions.size >= this.#maxSessions) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    const session: Session = {
      id: randomBytes(32).toString('base64url'),
      principal,
      csrf: randomBytes(32).toString('base64url'),
      createdAt: now,
      lastSeenAt: now,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session of this id (its use noted), or undefined. */
  get(id: string): Session | undefined {
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    const now = this.#now();
    if (this.#expired(session, now)) {
      this.#sessions.delete(id);
      return undefined;
    }
    session.lastSeenAt = now;
    return session;
  }

  end(id: string): void {
    this.#sessions.delete(id);
  }

  #expired(session: Session, now: number): boolean {
    return now - session.lastSeenAt >= this.#idleMs || now - session.createdAt >= this.#maxAgeMs;
  }
}
