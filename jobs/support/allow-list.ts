import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import type { Workgroup } from '../../src/api/index.js';
import type { Finding } from '../../src/engine/index.js';

export type IpFamily = 'ipv4' | 'ipv6';

/** An IP range as written (`text`) and as compared: `network` may carry host bits, as the API allows. */
export interface Cidr {
  readonly text: string;
  readonly network: string;
  readonly prefix: number;
  readonly family: IpFamily;
}

/** Parses `a.b.c.d/n`, `x:y::/n` or a bare address (a /32 or /128); throws a RangeError naming the fault. */
export function parseCidr(input: string): Cidr {
  const text = input.trim();
  const slash = text.indexOf('/');
  const network = slash === -1 ? text : text.slice(0, slash);
  const version = isIP(network);
  if (version === 0) throw new RangeError(`"${input}" is not an IPv4 or IPv6 address or range`);
  const widest = version === 4 ? 32 : 128;
  const prefixText = slash === -1 ? String(widest) : text.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > widest) {
    throw new RangeError(`"${input}" has prefix length "${prefixText}"; expected 0-${widest}`);
  }
  return { text, network, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A CIDR in a policy: checked when the policy loads, so a run never meets a bad one. */
export const CidrSchema = z.string().transform((text, ctx): Cidr => {
  try {
    return parseCidr(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as RangeError).message });
    return z.NEVER;
  }
});

/**
 * Whether two ranges share an address. CIDR blocks are either nested or disjoint, so they
 * overlap exactly when the wider one holds any address of the narrower one. Families never
 * overlap: BlockList would match IPv4 addresses against `::/0` as IPv4-mapped ones.
 */
export function overlaps(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  const [wider, narrower] = a.prefix <= b.prefix ? [a, b] : [b, a];
  const ranges = new BlockList();
  ranges.addSubnet(wider.network, wider.prefix, wider.family);
  return ranges.check(narrower.network, narrower.family);
}

/**
 * Whether `outer` admits every address of `inner`: as wide or wider, and sharing an address
 * (blocks are nested or disjoint). Never across families, as for {@link overlaps}.
 */
export function contains(outer: Cidr, inner: Cidr): boolean {
  return outer.prefix <= inner.prefix && overlaps(outer, inner);
}

/** Whether two ranges are the same block however written (`10.0.0.1` and `10.0.0.1/32`, `::1` and `0::1/128`). */
export function sameRange(a: Cidr, b: Cidr): boolean {
  return a.prefix === b.prefix && overlaps(a, b);
}

/** Only an explicit `false` means off: the spec names `enable_allow_list` the enforcement flag. */
export function isEnforced(workgroup: Workgroup): boolean {
  return workgroup.enable_allow_list !== false;
}

/** The finding for a workgroup whose enforced allow list does not admit this runner's address. */
export function runnerBlocked(workgroupName: string, currentIp: string): Finding {
  return {
    rule: 'allow-list/runner-blocked',
    severity: 'warning',
    subject: workgroupName,
    message: `the allow list does not admit this runner's address ${currentIp}`,
  };
}
