import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AllowListMatcher, isCallerAllowed, normalizeIp, parseCidr } from '../../../src/sim/allow-list.js';

describe('CIDR matching', () => {
  it('matches IPv4 addresses inside a range and not outside it', () => {
    const matcher = new AllowListMatcher(['10.20.0.0/16']);
    expect(matcher.matches('10.20.255.1')).toBe(true);
    expect(matcher.matches('10.21.0.1')).toBe(false);
  });

  it('treats a /32 and a bare address as that one address', () => {
    const matcher = new AllowListMatcher(['203.0.113.7/32', '198.51.100.9']);
    expect(matcher.matches('203.0.113.7')).toBe(true);
    expect(matcher.matches('203.0.113.8')).toBe(false);
    expect(matcher.matches('198.51.100.9')).toBe(true);
  });

  it('matches IPv6 ranges, including compressed and expanded spellings', () => {
    const matcher = new AllowListMatcher(['2001:db8:abcd::/48']);
    expect(matcher.matches('2001:db8:abcd:1::5')).toBe(true);
    expect(matcher.matches('2001:0db8:abcd:0000:0000:0000:0000:0001')).toBe(true);
    expect(matcher.matches('2001:db8:abce::1')).toBe(false);
  });

  it('matches an IPv4-mapped IPv6 caller against IPv4 ranges', () => {
    const matcher = new AllowListMatcher(['127.0.0.1/32']);
    expect(matcher.matches('::ffff:127.0.0.1')).toBe(true);
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeIp('2001:db8::1')).toBe('2001:db8::1');
  });

  it('never matches an IPv4 caller against an IPv6-only list, nor a garbage address', () => {
    const matcher = new AllowListMatcher(['::/0']);
    expect(matcher.matches('2001:db8::1')).toBe(true);
    expect(matcher.matches('not-an-ip')).toBe(false);
  });

  it('allows everyone when enforcement is off, whatever the list', () => {
    const matcher = new AllowListMatcher([]);
    expect(isCallerAllowed(false, matcher, '192.0.2.1')).toBe(true);
    expect(isCallerAllowed(true, matcher, '192.0.2.1')).toBe(false);
  });

  it.each([
    ['10.0.0.0/33', /prefix length "33"/],
    ['10.0.0.0/x', /prefix length "x"/],
    ['2001:db8::/129', /expected 0-128/],
    ['300.1.1.1/8', /not an IPv4 or IPv6/],
    ['', /not an IPv4 or IPv6/],
  ])('rejects %j with a message naming the fault', (cidr, message) => {
    expect(() => parseCidr(cidr)).toThrow(message);
  });

  it('matches every IPv4 address against the network its own prefix masks it to', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff_ffff }),
        fc.integer({ min: 0, max: 32 }),
        (address, prefix) => {
          const mask = prefix === 0 ? 0 : (0xffff_ffff << (32 - prefix)) >>> 0;
          const dotted = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.');
          const matcher = new AllowListMatcher([`${dotted((address & mask) >>> 0)}/${prefix}`]);
          expect(matcher.matches(dotted(address))).toBe(true);
          // Flipping the top bit leaves any network of prefix 1 or more.
          if (prefix > 0) expect(matcher.matches(dotted((address ^ 0x8000_0000) >>> 0))).toBe(false);
        },
      ),
    );
  });
});
