import { hostname, userInfo } from 'node:os';
import type { Settings } from '../config/index.js';
import type { Origin } from '../control/index.js';

/** The user and host running the command. */
function userAtHost(settings: Settings): string {
  let user = settings.user ?? 'unknown';
  try {
    user = userInfo().username;
  } catch {}
  return `${user}@${hostname()}`;
}

/** Who is acting, for what a person changes (holds, cancels): `--by`, else the user and host running the command. */
export function actor(by: string | undefined, settings: Settings): string {
  return by?.trim() ? by.trim() : userAtHost(settings);
}

/** Who asks for a change from this command, and from where (the audit trail's `where` is always the real user and host). */
export function cliOrigin(by: string | undefined, settings: Settings): Origin {
  return { who: actor(by, settings), where: `cli ${userAtHost(settings)}` };
}
