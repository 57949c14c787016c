import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, PrincipalDirectory } from './principals.js';
import { includes, type Role } from './roles.js';
import { type Session, SessionStore } from './sessions.js';

export const SESSION_COOKIE = 'nightshift_session';

/** Who a request is, and how it said so. */
export interface Access {
  readonly principal: Principal;
  /**
   * `bearer`: a principal's token in `Authorization`; `session`: the sign-in cookie; `ui-token`: the
   * ops token (`NIGHTSHIFT_UI_TOKEN`, a viewer); `open`: nothing is configured (loopback, read-only);
   * `local`: `NIGHTSHIFT_CONSOLE_ACTIONS=local`, before its session starts.
   */
  readonly via: 'bearer' | 'session' | 'ui-token' | 'open' | 'local';
  readonly session?: Session | undefined;
}

export interface AccessOptions {
  /** `NIGHTSHIFT_UI_TOKEN`: full access to `/metrics` and `/ui`, a viewer in the console. */
  uiToken?: string | undefined;
  /** The console's principals (`NIGHTSHIFT_CONSOLE_TOKENS_FILE`). */
  principals?: PrincipalDirectory | undefined;
  /** With neither of the above, on loopback: the OS user who may act (`NIGHTSHIFT_CONSOLE_ACTIONS=local`). */
  localUser?: string | undefined;
  /** Where sign-ins are kept. Default: a SessionStore with its defaults. */
  sessions?: SessionStore | undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Equal in constant time: both sides hashed first, so their lengths are equal and say nothing. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** The credential an Authorization header presents: a bearer token, or a Basic password. */
export function presentedToken(header: string | undefined): string | undefined {
  return presented(header)?.token;
}

function presented(header: string | undefined): { scheme: 'bearer' | 'basic'; token: string } | undefined {
  if (!header) return undefined;
  const match = /^(\w+) +(.+)$/.exec(header.trim());
  if (!match) return undefined;
  const [, scheme = '', value = ''] = match;
  if (scheme.toLowerCase() === 'bearer') return { scheme: 'bearer', token: value.trim() };
  if (scheme.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(value.trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : { scheme: 'basic', token: decoded.slice(colon + 1) };
}

function cookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Whether the page was asked for over HTTPS, here or at a proxy in front that says so. */
function overHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return request.protocol === 'https' || first === 'https';
}

/**
 * Whether a browser sent the request from another site. `Sec-Fetch-Site` when the browser sends it
 * (every current one does); else `Origin` against the `Host` asked for; neither (an old browser, a
 * script): not known to be cross-site, and the CSRF token decides alone.
 */
export function crossSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

const GRANTED = new WeakMap<FastifyRequest, Access>();

/** Who the guard found the request to be; undefined for a public route asked for by nobody known. */
export function accessOf(request: FastifyRequest): Access | undefined {
  return GRANTED.get(request);
}

/** Routes anyone may ask for once people sign in: the sign-in page and what it is drawn with. */
const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  '/login',
  '/console/console.css',
  '/console/console.js',
  '/favicon.ico',
]);

/** Who may reach the ops server's guarded routes, and the sessions of those who signed in. */
export class AccessGate {
  readonly sessions: SessionStore;
  readonly #options: AccessOptions;

  constructor(options: AccessOptions) {
    this.#options = options;
    this.sessions = options.sessions ?? new SessionStore();
  }

  /** Whether a request must present something: a token or a principal is configured. */
  get required(): boolean {
    return Boolean(this.#options.uiToken || this.#options.principals);
  }

  /** Whether principals sign in with their tokens (`/login`). */
  get hasPrincipals(): boolean {
    return this.#options.principals !== undefined;
  }

  /** Whether people sign in (principals or local actions): the console then has `/login` and forms. */
  get signIns(): boolean {
    return Boolean(this.#options.principals || this.#options.localUser);
  }

  /** Who presents `token`: a principal, or the ops token's viewer. */
  principalOf(token: string): { principal: Principal; via: 'bearer' | 'ui-token' } | undefined {
    const principal = this.#options.principals?.find(token);
    if (principal) return { principal, via: 'bearer' };
    const { uiToken } = this.#options;
    if (uiToken && sameSecret(token, uiToken))
      return { principal: { name: 'ops-token', role: 'viewer' }, via: 'ui-token' };
    return undefined;
  }

  /**
   * Who the request is: a principal's bearer token, a session, the ops token (bearer or Basic); with
   * nothing configured, the open viewer or the local user. Undefined: nobody known, refuse it. A
   * principal's token in Basic is refused: a browser re-sends Basic by itself, like a cookie, and
   * only bearer requests go without a CSRF token.
   */
  authenticate(request: FastifyRequest): Access | undefined {
    const credential = presented(request.headers.authorization);
    if (credential) {
      const found = this.principalOf(credential.token);
      if (found?.via === 'ui-token') return found;
      if (found && credential.scheme === 'bearer') return found;
    }
    const id = cookie(request, SESSION_COOKIE);
    const session = id ? this.sessions.get(id) : undefined;
    if (session) return { principal: session.principal, via: 'session', session };
    if (this.required) return undefined;
    const { localUser } = this.#options;
    return localUser
      ? { principal: { name: localUser, role: 'operator' }, via: 'local' }
      : { principal: { name: 'anonymous', role: 'viewer' }, via: 'open' };
  }

  /**
   * Whether the request may go on: someone known (kept for `accessOf`), or a public route once
   * principals sign in. Only the ops token guards the sign-in page's assets without principals, as
   * it did before there were any.
   */
  admit(request: FastifyRequest): boolean {
    const access = this.authenticate(request);
    if (access) GRANTED.set(request, access);
    return (
      Boolean(access) ||
      (this.#options.principals !== undefined && PUBLIC_ROUTES.has(request.routeOptions.url ?? ''))
    );
  }

  /** Starts a session for `principal` and sets its cookie. */
  signIn(request: FastifyRequest, reply: FastifyReply, principal: Principal): Session {
    const session = this.sessions.create(principal);
    reply.header('set-cookie', this.#cookie(request, session.id, this.sessions.cookieMaxAgeSeconds));
    return session;
  }

  /** Ends the request's session, if any, and clears its cookie. */
  signOut(request: FastifyRequest, reply: FastifyReply): void {
    const id = cookie(request, SESSION_COOKIE);
    if (id) this.sessions.end(id);
    reply.header('set-cookie', this.#cookie(request, '', 0));
  }

  /** The session forms are rendered with: the request's own; for the local user, one started now. */
  sessionFor(request: FastifyRequest, reply: FastifyReply, access: Access): Session | undefined {
    if (access.session) return access.session;
    return access.via === 'local' ? this.signIn(request, reply, access.principal) : undefined;
  }

  #cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
    const secure = overHttps(request) ? '; Secure' : '';
    return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
  }
}

/** Why a state-changing request is refused, or undefined when it may go on. */
export function postProblem(
  request: FastifyRequest,
  access: Access,
  csrf: unknown,
  least: Role | undefined,
): string | undefined {
  if (least && !includes(access.principal.role, least))
    return `${access.principal.name} is a ${access.principal.role}: this needs the ${least} role`;
  // a bearer token is never sent by a browser on its own, so a forged cross-site form cannot carry it
  if (access.via === 'bearer') return undefined;
  if (crossSite(request)) return 'refused: the form was sent from another site';
  if (!access.session) return 'sign in first: this form needs a session';
  if (typeof csrf !== 'string' || !sameSecret(csrf, access.session.csrf))
    return 'refused: the form is missing its CSRF token or it is stale; reload the page and try again';
  return undefined;
}
