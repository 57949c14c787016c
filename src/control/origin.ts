import type { AuditAction, AuditTrail } from '../store/index.js';

/** Who asks for a change and from where: the CLI's user and host, or the console's principal and address. */
export interface Origin {
  /** `--by`, else the user and host; or the console's signed-in principal. */
  readonly who: string;
  /** `cli <user>@<host>` or `console <address>`. */
  readonly where: string;
}

/** Where a change is recorded. */
export type AuditLog = Pick<AuditTrail, 'append'>;

/** Records a change a person made, once it is made. */
export async function recordChange(
  audit: AuditLog,
  origin: Origin,
  action: AuditAction,
  subject: string,
  { why, details }: { why?: string | undefined; details?: Record<string, string | number | boolean> } = {},
): Promise<void> {
  await audit.append({
    who: origin.who,
    where: origin.where,
    action,
    subject,
    ...(why ? { why } : {}),
    ...(details && Object.keys(details).length > 0 ? { details } : {}),
  });
}
