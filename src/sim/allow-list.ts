import { BlockList, isIP } from 'node:net';

export interface ParsedCidr {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The caller's address as a person would write it: a dual-stack socket reports IPv4 peers as
 * `::ffff:a.b.c.d`, which must compare equal to `a.b.c.d/32` and print as `a.b.c.d`.
 */
export function normalizeIp(address: string): string {
  const mapped = MAPPED_IPV4.exec(address);
  return mapped?.[1] ?? address;
}

/** Parses `a.b.c.d/n`, `x:y::/n` or a bare address (a /32 or /128); throws a RangeError naming the fault. */
export function parseCidr(cidr: string): ParsedCidr {
  const slash = cidr.indexOf('/');
  const network = slash === -1 ? cidr : cidr.slice(0, slash);
  const version = isIP(network);
  if (version === 0) throw new RangeError(`"${cidr}" is not an IPv4 or IPv6 address or range`);
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const maxPrefix = version === 4 ? 32 : 128;
  const prefixText = slash === -1 ? String(maxPrefix) : cidr.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > maxPrefix) {
    throw new RangeError(`"${cidr}" has prefix length "${prefixText}"; expected 0-${maxPrefix}`);
  }
  return { network, prefix, family };
}

/** Answers whether an address falls in any of a list's ranges, IPv4 and IPv6 alike. */
export class AllowListMatcher {
  readonly #ranges = new BlockList();

  constructor(cidrs: Iterable<string>) {
    for (const cidr of cidrs) {
      const { network, prefix, family } = parseCidr(cidr);
      this.#ranges.addSubnet(network, prefix, family);
    }
  }

  matches(address: string): boolean {
    const ip = normalizeIp(address);
    const version = isIP(ip);
    if (version === 0) return false;
    return this.#ranges.check(ip, version === 4 ? 'ipv4' : 'ipv6');
  }
}

/** With enforcement off every caller is allowed; the spec's `enable_allow_list` is that switch. */
export function isCallerAllowed(enforced: boolean, matcher: AllowListMatcher, address: string): boolean {
  return !enforced || matcher.matches(address);
}
