import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { expectPasswordRequired } from '../helpers/deploy-redis.js';
import { redisCommand } from '../helpers/redis-command.js';

/**
 * deploy/kubernetes as kubectl renders it (`kubectl kustomize`, what `kubectl apply -k` applies),
 * with made-up secret files in place of the git-ignored ones: test/unit/deploy/kubernetes.test.ts
 * reads the manifests themselves; this checks what kustomize makes of them (generated secrets
 * under hashed names, every reference rewritten to them) and runs the Redis it renders.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const REDIS_PASSWORD = 'kustomize-redis-password-7d20';
const POLICY_KEY = 'kustomize-policy-key-of-at-least-32-characters';

interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: {
    template?: {
      metadata: { labels: Record<string, string> };
      spec: {
        containers: {
          name: string;
          args?: string[];
          command?: string[];
          env?: {
            name: string;
            value?: string;
            valueFrom?: { secretKeyRef?: { name: string; key: string } };
          }[];
          readinessProbe?: { exec?: { command: string[] } };
          volumeMounts?: { name: string; mountPath: string }[];
        }[];
        volumes?: {
          name: string;
          secret?: { secretName: string; items?: { key: string; path: string }[] };
        }[];
      };
    };
  };
}

const KUBECTL_MISSING =
  'kubectl is not on the PATH: this test renders deploy/kubernetes with `kubectl kustomize`. ' +
  "Install kubectl (it ships kustomize), as this project's machines have it.";

let rendered: Rendered[];
const work = mkdtempSync(join(tmpdir(), 'nightshift-kustomize-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(async () => {
  const dir = join(work, 'kubernetes');
  cpSync(join(root, 'deploy/kubernetes'), dir, { recursive: true });
  mkdirSync(join(dir, 'secrets'), { recursive: true });
  writeFileSync(join(dir, 'secrets/api-key'), 'made-up-api-key');
  writeFileSync(join(dir, 'secrets/ui-token'), 'made-up-ui-token');
  writeFileSync(join(dir, 'secrets/redis-password'), `${REDIS_PASSWORD}\n`);
  writeFileSync(join(dir, 'secrets/policy-key'), POLICY_KEY);
  const output = await promisify(execFile)('kubectl', ['kustomize', dir], { maxBuffer: 16 * 2 ** 20 }).catch(
    (error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new Error(KUBECTL_MISSING) : error;
    },
  );
  rendered = parseAllDocuments(output.stdout).map((document) => document.toJS() as Rendered);
}, 60_000);

function workload(component: string): Rendered {
  const found = rendered.find(
    (object) => object.spec?.template?.metadata.labels['app.kubernetes.io/component'] === component,
  );
  if (!found) throw new Error(`kustomize rendered no ${component}`);
  return found;
}

/** The secret a container's file at `path` comes from, by the volume mounted above it. */
function secretOf(object: Rendered, path: string): { secretName: string; key: string } {
  const pod = object.spec?.template?.spec;
  const container = pod?.containers[0];
  const mount = container?.volumeMounts?.find((candidate) => path.startsWith(`${candidate.mountPath}/`));
  const volume = pod?.volumes?.find((candidate) => candidate.name === mount?.name);
  const file = path.slice((mount?.mountPath.length ?? 0) + 1);
  const item = volume?.secret?.items?.find((candidate) => candidate.path === file);
  return { secretName: volume?.secret?.secretName ?? '', key: item?.key ?? file };
}

describe('kubectl kustomize deploy/kubernetes', () => {
  it('renders the network policies into the namespace: default deny, Redis, the ops port', () => {
    const policies = rendered.filter((object) => object.kind === 'NetworkPolicy');
    expect(policies.map((policy) => policy.metadata.name).sort()).toEqual([
      'default-deny-ingress',
      'nightshift-ops',
      'nightshift-redis',
    ]);
    for (const policy of policies) expect(policy.metadata.namespace).toBe('nightshift');
  });

  it('generates the Redis secret from the password file under a hashed name, with a URL that holds no password, and points Redis and every role at it', () => {
    const redis = workload('redis');
    const script = redisCommand(redis.spec?.template?.spec.containers[0]?.command ?? []);
    const source = secretOf(redis, script.passwordFile ?? '');
    const secret = rendered.find(
      (object) => object.kind === 'Secret' && object.metadata.name === source.secretName,
    );
    expect(source.secretName).toMatch(/^nightshift-redis-[a-z0-9]{10}$/);
    expect(
      Buffer.from(secret?.data?.[source.key] ?? '', 'base64')
        .toString('utf8')
        .trim(),
    ).toBe(REDIS_PASSWORD);
    const url = new URL(Buffer.from(secret?.data?.url ?? '', 'base64').toString('utf8'));
    expect(url.password).toBe('');
    for (const role of ['scheduler', 'worker']) {
      const object = workload(role);
      const env = object.spec?.template?.spec.containers[0]?.env ?? [];
      const file = env.find((variable) => variable.name === 'NIGHTSHIFT_REDIS_PASSWORD_FILE')?.value ?? '';
      expect(secretOf(object, file), role).toEqual(source);
      expect(env.find((variable) => variable.name === 'REDIS_URL')?.valueFrom?.secretKeyRef?.name, role).toBe(
        source.secretName,
      );
    }
  });

  it('generates the policy key secret from its file under a hashed name, and gives the scheduler and the worker the same key file', () => {
    const sources = ['scheduler', 'worker'].map((role) => {
      const object = workload(role);
      const env = object.spec?.template?.spec.containers[0]?.env ?? [];
      return secretOf(
        object,
        env.find((variable) => variable.name === 'NIGHTSHIFT_POLICY_KEY_FILE')?.value ?? '',
      );
    });
    expect(sources[0]?.secretName).toMatch(/^nightshift-policy-key-[a-z0-9]{10}$/);
    expect(sources[1]).toEqual(sources[0]);
    const secret = rendered.find(
      (object) => object.kind === 'Secret' && object.metadata.name === sources[0]?.secretName,
    );
    expect(Buffer.from(secret?.data?.[sources[0]?.key ?? ''] ?? '', 'base64').toString('utf8')).toBe(
      POLICY_KEY,
    );
  });

  it('renders a Redis that, run here by its own command, requires that password, keeps it out of /proc, is ready only with it, and lets nightshift in with the file', async () => {
    const container = workload('redis').spec?.template?.spec.containers[0];
    const probe = container?.readinessProbe?.exec?.command ?? [];
    expect(probe.slice(0, 2)).toEqual(['sh', '-c']);
    await expectPasswordRequired(redisCommand(container?.command ?? []), probe[2] ?? '', REDIS_PASSWORD);
  });
});
