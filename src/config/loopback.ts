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
