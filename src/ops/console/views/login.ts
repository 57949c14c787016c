import { html } from './html.js';
import { type PageContext, page, paths } from './layout.js';

/**
 * `/login`: one field for the token. The token goes in the body of a POST, never in a URL (where
 * logs and the history would keep it); the answer sets the session cookie.
 */
export function renderLogin(ctx: PageContext, problem?: string): string {
  const to = paths(ctx.base);
  const now = ctx.now ?? new Date().toISOString();
  return page(ctx, {
    title: 'Sign in',
    active: null,
    json: to.api.schedules,
    generatedAt: now,
    body: html`${problem ? html`<div class="notice warn" role="alert" id="login-problem"><p>${problem}</p></div>` : ''}
<form method="post" action="${to.login}" class="login" id="login">
<p><label for="f-token">Console token</label> <input type="password" id="f-token" name="token" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p>
</form>
<p class="meta">A token comes from whoever runs nightshift (<code>nightshift console-token</code>); the ops token signs in as a viewer.</p>`,
  });
}
