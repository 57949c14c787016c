import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DatabaseInUseError } from '../../../jobs/delete-database.js';
import { NotFoundInFleetError } from '../../../jobs/support/by-name-or-id.js';
import { NoCloudProvidersError } from '../../../jobs/support/cloud-providers.js';
import { SecretSinkError } from '../../../jobs/support/secret-sink.js';
import { UpgradeFailedError } from '../../../jobs/upgrade-cloud-provider.js';
import { ApiError } from '../../../src/api/index.js';
import { RunFailedError, UsageError } from '../../../src/cli/exit.js';
import { ConfigError } from '../../../src/config/api-env.js';
import { WaitAbandonedError, WaitTimeoutError } from '../../../src/engine/fleet.js';
import { AttemptsFailedError } from '../../../src/engine/retry.js';
import { isNightshiftError, NightshiftError } from '../../../src/errors/index.js';
import { WebhookError } from '../../../src/notify/index.js';
import { OpsServerError } from '../../../src/ops/index.js';
import { PolicyError } from '../../../src/policy/index.js';
import { SimError } from '../../../src/sim/envelope.js';
import { StateError } from '../../../src/sim/index.js';
import { RedisServerMissingError } from '../../../src/store/local-server.js';
import { RedisUrlError } from '../../../src/store/redis.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** One instance of every error class, one per code for the classes that carry several. */
const samples: readonly NightshiftError[] = [
  new ApiError({
    operation: 'pauseWorkspace',
    method: 'POST',
    path: '/p',
    status: 500,
    type: 'Internal-Error',
    reason: 'x',
  }),
  new AttemptsFailedError(3, new Error('down')),
  new ConfigError('NIGHTSHIFT_API_URL is not set'),
  new DatabaseInUseError('database "db" still has workspaces'),
  new NoCloudProvidersError('no cloud providers'),
  new NotFoundInFleetError('no workspace named "x"'),
  new OpsServerError('a token is required', 'NS_OPS_TOKEN_REQUIRED'),
  new OpsServerError('cannot listen', 'NS_OPS_LISTEN_FAILED'),
  new PolicyError([{ file: 'p.yaml', line: 1, col: 1, message: 'bad' }]),
  new RedisServerMissingError('redis-server'),
  new RedisUrlError('bad scheme'),
  new RunFailedError('run-1', 'boom'),
  new SecretSinkError('secret sink /s: cannot write'),
  new SimError('Not-Found', 'workspace_id', 'no such workspace'),
  new StateError('state.json: (root): invalid'),
  new UpgradeFailedError('the provider is not upgraded'),
  new UsageError('unknown job "x"', { kind: 'unknown-job' }),
  new WaitAbandonedError('the workspace was deleted'),
  new WaitTimeoutError('not Running within 60s'),
  ...(['WEBHOOK_STATUS', 'WEBHOOK_NETWORK', 'WEBHOOK_TIMEOUT', 'WEBHOOK_ABORTED'] as const).map(
    (code) => new WebhookError(code, 'ops', { attempts: 1, reason: 'x', retryable: false }),
  ),
];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** Every class exported by a module of src/ or jobs/ whose instances are Errors. */
let exportedErrorClasses: Set<abstract new (...args: never[]) => Error>;

beforeAll(async () => {
  const modules = await Promise.all(
    [...sourceFiles('src'), ...sourceFiles('jobs')].map(
      (file) => import(path.join(root, file)) as Promise<Record<string, unknown>>,
    ),
  );
  exportedErrorClasses = new Set(
    modules
      .flatMap((module) => Object.values(module))
      .filter(
        (value): value is abstract new (...args: never[]) => Error =>
          typeof value === 'function' && value.prototype instanceof Error,
      ),
  );
}, 60_000);

/** `| \`NS_API_ERROR\` | ApiError | … |` rows of docs/errors.md, as code → class name. */
function documentedCodes(): Map<string, string> {
  const text = readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
  return new Map(
    [...text.matchAll(/^\| `([A-Z_]+)` \| `(\w+)` \|/gm)].map((m) => [m[1] as string, m[2] as string]),
  );
}

describe('error codes', () => {
  it('every error class exported from src/ and jobs/ extends NightshiftError', () => {
    const plain = [...exportedErrorClasses]
      .filter((cls) => cls !== NightshiftError && !(cls.prototype instanceof NightshiftError))
      .map((cls) => cls.name);
    expect(plain).toEqual([]);
  });

  it('every exported error class has a sample here, so each of its codes is checked below', () => {
    const sampled = new Set(samples.map((sample) => sample.constructor));
    const missing = [...exportedErrorClasses]
      .filter((cls) => cls !== NightshiftError && !sampled.has(cls))
      .map((cls) => cls.name);
    expect(missing).toEqual([]);
  });

  it('gives each class codes of its own, in upper snake case', () => {
    const owner = new Map<string, string>();
    const shared: string[] = [];
    for (const sample of samples) {
      expect(sample.code).toMatch(/^(NS|WEBHOOK)_[A-Z]+(_[A-Z]+)*$/);
      const previous = owner.get(sample.code);
      if (previous !== undefined && previous !== sample.constructor.name) shared.push(sample.code);
      owner.set(sample.code, sample.constructor.name);
    }
    expect(shared).toEqual([]);
  });

  it('names each error after its class, so a log line says which one it was', () => {
    for (const sample of samples) expect(sample.name).toBe(sample.constructor.name);
  });

  it('docs/errors.md lists every code with its class, and no code that does not exist', () => {
    const actual = new Map(samples.map((sample) => [sample.code, sample.constructor.name]));
    expect(Object.fromEntries(documentedCodes())).toEqual(Object.fromEntries(actual));
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
    const cause = new Error('ENOENT');
    expect(new ConfigError('NIGHTSHIFT_API_KEY_FILE cannot be read', { cause }).cause).toBe(cause);
  });
});
