import { describe, expect, it } from 'vitest';
import { allowListAudit, auditAllowList, failOnReason } from '../../../jobs/allow-list-audit.js';
import { contains, overlaps, parseCidr, sameRange } from '../../../jobs/support/allow-list.js';
import type { Finding } from '../../../src/engine/index.js';

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

  it('finds a range holding all of another only when it is as wide or wider, and never across families', () => {
    expect(contains(cidr('0.0.0.0/0'), cidr('0.0.0.0/0'))).toBe(true);
    expect(contains(cidr('0.0.0.0/0'), cidr('10.0.0.0/8'))).toBe(true);
    expect(contains(cidr('10.9.9.9/8'), cidr('10.1.0.0/16'))).toBe(true);
    expect(contains(cidr('10.0.0.0/8'), cidr('0.0.0.0/0'))).toBe(false);
    expect(contains(cidr('10.1.2.0/24'), cidr('10.0.0.0/8'))).toBe(false);
    expect(contains(cidr('11.0.0.0/8'), cidr('10.0.0.0/8'))).toBe(false);
    expect(contains(cidr('::/0'), cidr('0.0.0.0/0'))).toBe(false);
    expect(contains(cidr('0.0.0.0/0'), cidr('::/0'))).toBe(false);
    expect(contains(cidr('::/0'), cidr('::/0'))).toBe(true);
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

describe('auditAllowList: forbidden ranges', () => {
  const entries = [
    { cidr: '0.0.0.0/0', note: 'x' },
    { cidr: '0.0.0.0/1', note: 'x' },
    { cidr: '10.0.0.0/7', note: 'x' },
    { cidr: '10.1.2.0/24', note: 'x' },
    { cidr: '203.0.113.5', note: 'x' },
    { cidr: '::/0', note: 'x' },
    { cidr: '::ffff:0:0/96', note: 'x' },
    { cidr: '2001:db8::/32', note: 'x' },
  ];
  const flagged = (params: Record<string, unknown>) =>
    auditAllowList('ops', true, entries, allowListAudit.params.parse(params)).map(
      (f) => `${f.rule} ${f.subject}: ${f.message}`,
    );

  it('forbid 0.0.0.0/0 flags only an entry open to every IPv4 address, not every IPv4 entry', () => {
    expect(flagged({ forbid: ['0.0.0.0/0'] })).toEqual([
      'allow-list/forbidden-cidr ops 0.0.0.0/0: admits every address of forbidden range 0.0.0.0/0',
    ]);
  });

  it('forbid ::/0 flags only ::/0, and the two together flag exactly the entries open to the internet', () => {
    expect(flagged({ forbid: ['::/0'] })).toEqual([
      'allow-list/forbidden-cidr ops ::/0: admits every address of forbidden range ::/0',
    ]);
    expect(flagged({ forbid: ['0.0.0.0/0', '::/0'] })).toEqual([
      'allow-list/forbidden-cidr ops 0.0.0.0/0: admits every address of forbidden range 0.0.0.0/0',
      'allow-list/forbidden-cidr ops ::/0: admits every address of forbidden range ::/0',
    ]);
  });

  it('forbid flags an entry holding the whole range, however much wider, and names each range it holds', () => {
    expect(flagged({ forbid: ['10.0.0.0/8', '10.1.2.0/24'] })).toEqual([
      'allow-list/forbidden-cidr ops 0.0.0.0/0: admits every address of forbidden ranges 10.0.0.0/8, 10.1.2.0/24',
      'allow-list/forbidden-cidr ops 0.0.0.0/1: admits every address of forbidden ranges 10.0.0.0/8, 10.1.2.0/24',
      'allow-list/forbidden-cidr ops 10.0.0.0/7: admits every address of forbidden ranges 10.0.0.0/8, 10.1.2.0/24',
      'allow-list/forbidden-cidr ops 10.1.2.0/24: admits every address of forbidden range 10.1.2.0/24',
    ]);
  });

  it('forbidOverlap keeps the overlap rule under its own name: any shared address, same family only', () => {
    expect(flagged({ forbidOverlap: ['10.0.0.0/8'] })).toEqual([
      'allow-list/forbidden-overlap ops 0.0.0.0/0: admits addresses of forbidden range 10.0.0.0/8',
      'allow-list/forbidden-overlap ops 0.0.0.0/1: admits addresses of forbidden range 10.0.0.0/8',
      'allow-list/forbidden-overlap ops 10.0.0.0/7: admits addresses of forbidden range 10.0.0.0/8',
      'allow-list/forbidden-overlap ops 10.1.2.0/24: admits addresses of forbidden range 10.0.0.0/8',
    ]);
  });
});

describe('auditAllowList: severity per rule', () => {
  it('gives each rule the severity the policy sets, and its default otherwise', () => {
    const rules = allowListAudit.params.parse({
      forbid: ['0.0.0.0/0'],
      forbidOverlap: ['10.0.0.0/8'],
      maxPrefix: 24,
      severity: { 'too-wide': 'critical', disabled: 'warning', 'forbidden-overlap': 'info' },
    });
    const findings = auditAllowList('ops', false, [{ cidr: '0.0.0.0/0' }], rules);
    expect(Object.fromEntries(findings.map((f) => [f.rule, f.severity]))).toEqual({
      'allow-list/disabled': 'warning',
      'allow-list/forbidden-cidr': 'critical',
      'allow-list/forbidden-overlap': 'info',
      'allow-list/too-wide': 'critical',
      'allow-list/no-note': 'info',
    });
  });
});

describe('failOnReason', () => {
  const of = (...severities: Finding['severity'][]): Finding[] =>
    severities.map((severity, i) => ({ rule: 'r', severity, subject: `s${i}`, message: 'm' }));

  it('says nothing without failOn, or when no finding reaches it', () => {
    expect(failOnReason(of('critical'), undefined)).toBeUndefined();
    expect(failOnReason(of('warning', 'info'), 'critical')).toBeUndefined();
    expect(failOnReason([], 'info')).toBeUndefined();
  });

  it('counts the findings at failOn or above, by severity, most severe first', () => {
    expect(failOnReason(of('info', 'critical'), 'critical')).toBe(
      '1 finding reaches failOn: critical (1 critical)',
    );
    expect(failOnReason(of('warning', 'info', 'critical', 'warning'), 'warning')).toBe(
      '3 findings reach failOn: warning (1 critical, 2 warning)',
    );
    expect(failOnReason(of('info'), 'info')).toBe('1 finding reaches failOn: info (1 info)');
  });
});
