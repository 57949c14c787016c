import { hostname, userInfo } from 'node:os';
import type { Settings } from '../config/index.js';

/** Who is acting, for what a person changes (holds, cancels): `--by`, else the user and host running the command. */
export function actor(by: string | undefined, settings: Settings): string {
  if (by?.trim()) return by.trim();
  let user = settings.user ?? 'unknown';
  try {
    user = userInfo().username;
  } catch {}
  return `${user}@${hostname()}`;
}
