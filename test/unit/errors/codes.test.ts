import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { isNightshiftError, NightshiftError } from '../../../src/errors/index.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

type ErrorClass = abstract new (...args: never[]) => Error;
type NightshiftErrorClass = new (...args: unknown[]) => NightshiftError;

/**
 * How to make one of each error class, by class name (so the table does not care which file a
 * class lives in), one instance per code for the classes that carry several.
 */
const SAMPLES: Record<string, (cls: NightshiftErrorClass) => NightshiftError[]> = {
  ApiError: (C) => [
    new C({
      operation: 'pauseWorkspace',
      method: 'POST',
      path: '/p',
      status: 500,
      type: 'Internal-Error',
      reason: 'x',
    }),
  ],
  AttemptsFailedError: (C) => [new C(3, new Error('down'))],
  ConfigError: (C) => [new C('NIGHTSHIFT_API_URL is not set')],
  DatabaseInUseError: (C) => [new C('database "db" still has workspaces')],
  LeaseExpiredError: (C) => [new C('its lease was not confirmed by Redis within 30000 ms')],
  LedgerUnansweredError: (C) => [new C('Redis did not answer the ownership ledger')],
  NoCloudProvidersError: (C) => [new C('no cloud providers')],
  NotAnApproverError: (C) => [new C('bo', ['ana'])],
  NotFoundInFleetError: (C) => [new C('no workspace named "x"')],
  OpsServerError: (C) => [
    new C('a token is required', 'NS_OPS_TOKEN_REQUIRED'),
    new C('cannot listen', 'NS_OPS_LISTEN_FAILED'),
  ],
  PolicyError: (C) => [new C([{ file: 'p.yaml', line: 1, col: 1, message: 'bad' }])],
  PolicyRefusedError: (C) => [new C('a'.repeat(64), 'unsigned')],
  RunParametersRefusedError: (C) => [new C('drill@manual-1', 'unsigned')],
  RedisServerMissingError: (C) => [new C('redis-server')],
  RedisPortTakenError: (C) => [new C(6379)],
  RunHaltedError: (C) => [
    new C({ failures: 1 }, [{ key: 'cp-1', outcome: 'failed', attempts: 1, requestIds: [] }], 1),
  ],
  RunAwaitingApprovalError: (C) => [new C('drill@manual-1')],
  RunCancelledError: (C) => [new C({ by: 'ana', reason: 'wrong fleet', at: '2026-11-27T02:00:00.000Z' })],
  RedisUrlError: (C) => [new C('bad scheme')],
  RunFailedError: (C) => [new C('run-1', 'boom')],
  SecretSinkError: (C) => [new C('secret sink /s: cannot write')],
  SimError: (C) => [new C('Not-Found', 'workspace_id', 'no such workspace')],
  StateError: (C) => [new C('state.json: (root): invalid')],
  TokensFileError: (C) => [new C('tokens.yaml: principals[0].role: expected viewer, operator or approver')],
  UnknownApprovalError: (C) => [new C('drill@manual-1')],
  UnknownRunError: (C) => [new C('drill@manual-1')],
  UpgradeFailedError: (C) => [new C('the provider is not upgraded')],
  UsageError: (C) => [new C('unknown job "x"', { kind: 'unknown-job' })],
  WaitAbandonedError: (C) => [new C('the workspace was deleted')],
  WaitTimeoutError: (C) => [new C('not Running within 60s')],
  RedisUnansweredError: (C) => [new C('Redis did not answer within 5000 ms')],
  WebhookError: (C) =>
    ['WEBHOOK_STATUS', 'WEBHOOK_NETWORK', 'WEBHOOK_TIMEOUT', 'WEBHOOK_ABORTED'].map(
      (code) => new C(code, 'ops', { attempts: 1, reason: 'x', retryable: false }),
    ),
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** Every class exported by a module of src/ or jobs/ whose instances are Errors. */
let exported: ErrorClass[];
/** One instance per code of every exported NightshiftError class that has a sample. */
let samples: NightshiftError[];

beforeAll(async () => {
  const modules = await Promise.all(
    [...sourceFiles('src'), ...sourceFiles('jobs')].map(
      (file) => import(path.join(root, file)) as Promise<Record<string, unknown>>,
    ),
  );
  const classes = new Set(
    modules
      .flatMap((module) => Object.values(module))
      .filter(
        (value): value is ErrorClass => typeof value === 'function' && value.prototype instanceof Error,
      ),
  );
  exported = [...classes];
  samples = exported.flatMap((cls) => {
    const make = SAMPLES[cls.name];
    return make && cls.prototype instanceof NightshiftError
      ? make(cls as unknown as NightshiftErrorClass)
      : [];
  });
}, 60_000);

/** `| \`NS_API_ERROR\` | \`ApiError\` | … |` rows of docs/errors.md, as code → class name. */
function documentedCodes(): Record<string, string> {
  const text = readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
  return Object.fromEntries([...text.matchAll(/^\| `([A-Z_]+)` \| `(\w+)` \|/gm)].map((m) => [m[1], m[2]]));
}

describe('error codes', () => {
  it('every error class exported from src/ and jobs/ extends NightshiftError', () => {
    const plain = exported
      .filter((cls) => cls !== NightshiftError && !(cls.prototype instanceof NightshiftError))
      .map((cls) => cls.name);
    expect(plain).toEqual([]);
  });

  it('has a sample of every exported error class, and of no other, so each code is checked below', () => {
    const names = exported.filter((cls) => cls !== NightshiftError).map((cls) => cls.name);
    expect(names.filter((name) => !(name in SAMPLES))).toEqual([]);
    expect(Object.keys(SAMPLES).filter((name) => !names.includes(name))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('gives each class codes of its own, in upper snake case', () => {
    const owner = new Map<string, string>();
    const shared: string[] = [];
    for (const sample of samples) {
      expect(sample.code).toMatch(/^(NS|WEBHOOK)_[A-Z]+(_[A-Z]+)*$/);
      const previous = owner.get(sample.code);
      if (previous !== undefined) shared.push(`${sample.code}: ${previous}, ${sample.constructor.name}`);
      owner.set(sample.code, sample.constructor.name);
    }
    expect(shared).toEqual([]);
  });

  it('names each error after its class, so a log line says which one it was', () => {
    for (const sample of samples) expect(sample.name).toBe(sample.constructor.name);
  });

  it('docs/errors.md lists every code with its class, and no code that does not exist', () => {
    const actual = Object.fromEntries(samples.map((sample) => [sample.code, sample.constructor.name]));
    expect(documentedCodes()).toEqual(actual);
  });
});

describe('isNightshiftError', () => {
  it('recognises every nightshift error, and one by its code', () => {
    for (const sample of samples) {
      expect(isNightshiftError(sample)).toBe(true);
      expect(isNightshiftError(sample, sample.code)).toBe(true);
      expect(isNightshiftError(sample, 'NS_NO_SUCH_CODE')).toBe(false);
    }
  });

  it('refuses other errors, even one carrying a nightshift code, and non-errors', () => {
    expect(isNightshiftError(Object.assign(new Error('x'), { code: 'NS_API_ERROR' }))).toBe(false);
    expect(isNightshiftError(undefined)).toBe(false);
    expect(isNightshiftError('NS_API_ERROR')).toBe(false);
  });

  it('recognises an error made by another copy of the module (the built CLI beside the sources)', () => {
    const foreign = { [Symbol.for('nightshift.error')]: true, code: 'NS_API_ERROR', message: 'x' };
    expect(isNightshiftError(foreign, 'NS_API_ERROR')).toBe(true);
  });
});

describe('NightshiftError', () => {
  it('keeps the cause it is given', () => {
    class ReadFailed extends NightshiftError {
      readonly code = 'NS_READ_FAILED';
    }
    const cause = new Error('ENOENT');
    expect(new ReadFailed('cannot read', { cause }).cause).toBe(cause);
  });
});
