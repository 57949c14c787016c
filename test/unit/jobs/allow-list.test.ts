import { describe, expect, it } from 'vitest';
import { overlaps, parseCidr, sameRange } from '../../../jobs/allow-list.js';
import { allowListAudit, auditAllowList } from '../../../jobs/allow-list-audit.js';

const cidr = parseCidr;

describe('CIDR helpers', () => {
  it('reads a bare address as a single-address range of its family', () => {
    expect(parseCidr('203.0.113.5')).toMatchObject({ prefix: 32, family: 'ipv4' });
    expect(parseCidr(' 2001:db8::1 ')).toMatchObject({ text: '2001:db8::1', prefix: 128, family: 'ipv6' });
  });

  it('refuses what is not an address or has a prefix its family cannot have', () => {
    expect(() => parseCidr('office')).toThrow('"office" is not an IPv4 or IPv6 address or range');
    expect(() => parseCidr('10.0.0.0/33')).toThrow('expected 0-32');
    expect(() => parseCidr('10.0.0.0/')).toThrow('prefix length ""');
    expect(() => parseCidr('::/129')).toThrow('expected 0-128');
  });

  it('finds overlap whichever range is wider, and none across families', () => {
    expect(overlaps(cidr('10.1.2.0/24'), cidr('10.0.0.0/8'))).toBe(true);
    expect(overlaps(cidr('0.0.0.0/0'), cidr('10.0.0.0/8'))).toBe(true);
    expect(overlaps(cidr('11.0.0.0/8'), cidr('10.0.0.0/8'))).toBe(false);
    expect(overlaps(cidr('::/0'), cidr('10.0.0.0/8'))).toBe(false);
    expect(overlaps(cidr('2001:db8:1::/48'), cidr('2001:db8::/32'))).toBe(true);
  });

  it('sees one block however it is written, and tells blocks of different sizes apart', () => {
    expect(sameRange(cidr('10.0.0.1'), cidr('10.0.0.1/32'))).toBe(true);
    expect(sameRange(cidr('10.1.2.9/24'), cidr('10.1.2.0/24'))).toBe(true);
    expect(sameRange(cidr('2001:0db8:0::/48'), cidr('2001:db8::/48'))).toBe(true);
    expect(sameRange(cidr('10.1.2.0/24'), cidr('10.1.0.0/16'))).toBe(false);
  });
});

describe('auditAllowList', () => {
  const rules = allowListAudit.params.parse({});

  it('reports an entry whose range cannot be read instead of failing the audit', () => {
    const findings = auditAllowList(
      'ops',
      true,
      [
        { cidr: 'not-an-ip', note: 'legacy' },
        { cidr: '10.0.0.1/32', note: 'x' },
      ],
      rules,
    );
    expect(findings).toEqual([
      {
        rule: 'allow-list/invalid-cidr',
        severity: 'warning',
        subject: 'ops not-an-ip',
        message: '"not-an-ip" is not an IPv4 or IPv6 address or range: the entry cannot be audited',
      },
    ]);
  });

  it('applies a single maxPrefix number to IPv4 only', () => {
    const narrow = allowListAudit.params.parse({ maxPrefix: 24 });
    const findings = auditAllowList(
      'ops',
      true,
      [
        { cidr: '10.0.0.0/16', note: 'x' },
        { cidr: '2001:db8::/16', note: 'x' },
      ],
      narrow,
    );
    expect(findings.map((f) => `${f.rule} ${f.subject}`)).toEqual(['allow-list/too-wide ops 10.0.0.0/16']);
  });

  it('checks notes and enforcement by default, and treats a blank note as none', () => {
    const findings = auditAllowList(
      'ops',
      false,
      [{ cidr: '10.0.0.1/32', note: ' ' }, { cidr: '10.0.0.2/32' }],
      rules,
    );
    expect(findings.map((f) => `${f.rule} ${f.subject}`)).toEqual([
      'allow-list/disabled ops',
      'allow-list/no-note ops 10.0.0.1/32',
      'allow-list/no-note ops 10.0.0.2/32',
    ]);
  });
});
