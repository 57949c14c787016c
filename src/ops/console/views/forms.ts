import type { ConsoleAction } from '../../access/roles.js';
import { type Html, html } from './html.js';
import type { PageContext } from './layout.js';

/** Whether the page's user gets the form for `action`: the role allows it and a session carries a CSRF token. */
export function offers(ctx: PageContext, action: ConsoleAction): boolean {
  return Boolean(ctx.user?.csrf && ctx.user.may(action));
}

/**
 * A form that changes something: a plain POST with the session's CSRF token, so it works without
 * the script; nothing for a user who may not make the change.
 */
export function actionForm(
  ctx: PageContext,
  action: ConsoleAction,
  to: string,
  { fields, button, label }: { fields?: Html; button: string; label?: string },
): Html {
  if (!offers(ctx, action)) return html``;
  return html`<form method="post" action="${to}" class="action" data-action="${action}"${label ? html` aria-label="${label}"` : ''}>
<input type="hidden" name="csrf" value="${ctx.user?.csrf ?? ''}">${fields ?? ''}
<button type="submit" name="do" value="${action}">${button}</button>
</form>`;
}

/** A labelled text input. */
export function textField(
  name: string,
  label: string,
  {
    value = '',
    placeholder = '',
    required = false,
    id,
  }: { value?: string; placeholder?: string; required?: boolean; id?: string } = {},
): Html {
  const inputId = id ?? `f-${name}`;
  return html`<label for="${inputId}">${label}</label> <input type="text" id="${inputId}" name="${name}" value="${value}" placeholder="${placeholder}"${required ? html` required` : ''} maxlength="500">`;
}

/** A labelled textarea, one entry a line. */
export function textArea(
  name: string,
  label: string,
  { placeholder = '', id, rows = 3 }: { placeholder?: string; id?: string; rows?: number } = {},
): Html {
  const inputId = id ?? `f-${name}`;
  return html`<label for="${inputId}">${label}</label> <textarea id="${inputId}" name="${name}" rows="${rows}" placeholder="${placeholder}" maxlength="8000" spellcheck="false"></textarea>`;
}

/** A labelled checkbox, sent as `on` when ticked. */
export function checkbox(
  name: string,
  label: string,
  { id, checked = false }: { id?: string; checked?: boolean } = {},
): Html {
  const inputId = id ?? `f-${name}`;
  return html`<input type="checkbox" id="${inputId}" name="${name}"${checked ? html` checked` : ''}> <label for="${inputId}">${label}</label>`;
}
