/**
 * Whether `host` (a name, an address, or a URL's bracketed IPv6 host) names this machine only:
 * 127.0.0.0/8, ::1 (also an IPv4 loopback address as IPv6 reports it, ::ffff:127.x.y.z) or
 * localhost. Binds, clients and URLs are judged by this one rule.
 */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    /^127(\.\d{1,3}){3}$/.test(bare) ||
    /^::ffff:127(\.\d{1,3}){3}$/.test(bare)
  );
}

/** The variable that allows plain `http://` beyond loopback. */
export const INSECURE_HTTP_VARIABLE = 'NIGHTSHIFT_ALLOW_INSECURE_HTTP';

/**
 * Why `url` may not be used, or undefined: plain `http://` to a host beyond loopback sends what it
 * carries (`secret`: the API key, a webhook's secret path and every message) unencrypted, so it
 * needs the opt-in. The problem names the scheme and the host only, never the rest of the URL,
 * which may be the secret itself; a URL that does not parse is left to the checks of its form.
 */
export function plainHttpProblem(url: string, secret: string, allowed: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' || allowed || isLoopback(parsed.hostname)) return undefined;
  return (
    `plain http:// to ${parsed.hostname}, beyond loopback: ${secret} would cross the network ` +
    `unencrypted; use https://, or set ${INSECURE_HTTP_VARIABLE}=true to allow it`
  );
}
