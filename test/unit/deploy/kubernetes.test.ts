import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { actionRegistry } from '../../../jobs/index.js';
import {
  loadSettings,
  type Settings,
  SHUTDOWN_LIMIT_MS,
  shutdownBudget,
  VARIABLES,
} from '../../../src/config/index.js';
import {
  assertSafeBind,
  DEFAULT_OPS_PORT,
  isLoopback,
  Metrics,
  type OpsServer,
  startOpsServer,
} from '../../../src/ops/index.js';
import { parsePolicy } from '../../../src/policy/index.js';
import { cliProblem } from '../../helpers/cli-problem.js';
import { redisCommand } from '../../helpers/redis-command.js';

/**
 * No cluster runs the tests, so these read deploy/kubernetes and hold it to the code, as
 * test/integration/containers.test.ts does the compose file: every role one the CLI accepts,
 * every variable one the code reads and a value it parses, every secret and policy path one a
 * mount provides, every probe a path the ops server answers without the token.
 */

const root = fileURLToPath(new URL('../../..', import.meta.url));
const DIR = 'deploy/kubernetes';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path: string; port: string | number; httpHeaders?: unknown[] };
  exec?: { command: string[] };
}
interface Mount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Mount[];
}
interface Volume {
  name: string;
  configMap?: { name: string };
  secret?: { secretName: string };
}
interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
type Labels = Record<string, string>;
interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
}
interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: unknown;
}
interface PolicyRule {
  from?: Peer[];
  to?: Peer[];
  ports?: { port?: string | number; protocol?: string }[];
}
interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Labels };
  data?: Record<string, string>;
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Labels } & Labels;
    template?: { metadata: { labels: Labels; annotations?: Record<string, string> }; spec: PodSpec };
    ports?: { name?: string; port: number; targetPort: string | number }[];
    volumeClaimTemplates?: { metadata: { name: string } }[];
    podSelector?: LabelSelector;
    policyTypes?: ('Ingress' | 'Egress')[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}
interface Kustomization {
  resources: string[];
  secretGenerator?: { name: string; files?: string[]; literals?: string[] }[];
}

const kustomization = parse(readFileSync(join(root, DIR, 'kustomization.yaml'), 'utf8')) as Kustomization;
const manifestFiles = readdirSync(join(root, DIR)).filter(
  (file) => /\.ya?ml$/.test(file) && file !== 'kustomization.yaml',
);

function readManifests(file: string): KubeObject[] {
  const documents = parseAllDocuments(readFileSync(join(root, DIR, file), 'utf8'));
  return documents.map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
    return document.toJS() as KubeObject;
  });
}

const objects = kustomization.resources.flatMap(readManifests);
const workloads = objects.filter((object) => object.spec?.template);

function podOf(object: KubeObject): PodSpec {
  const pod = object.spec?.template?.spec;
  if (!pod) throw new Error(`${object.metadata.name} has no pod template`);
  return pod;
}

/** The image docker-compose.yml builds from the Dockerfile, which these run as well. */
const composeImage = String(
  (
    parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { image?: string }>;
    }
  ).services.worker?.image,
);

/** The pods that run the nightshift image, by role (the first argument). */
const nightshift = workloads.flatMap((object) =>
  podOf(object)
    .containers.filter((container) => container.image.split(':')[0] === composeImage.split(':')[0])
    .map((container) => ({ object, pod: podOf(object), container, role: container.args?.[0] ?? '' })),
);

function role(name: string): (typeof nightshift)[number] {
  const found = nightshift.find((entry) => entry.role === name);
  if (!found) throw new Error(`no container runs "nightshift ${name}"`);
  return found;
}

function envOf(container: Container): Map<string, EnvVar> {
  return new Map((container.env ?? []).map((variable) => [variable.name, variable]));
}

/** The settings the code reads from a container's environment; a secret's value stands in as a placeholder. */
function settingsOf(container: Container): Settings {
  const placeholders: Record<string, string> = { REDIS_URL: 'redis://secret.example:6379' };
  const environment = Object.fromEntries(
    (container.env ?? []).map((variable) => [
      variable.name,
      variable.value ?? placeholders[variable.name] ?? 'secret',
    ]),
  );
  return loadSettings(environment);
}

/** The keys a secret has, from the kustomization's generator (`key=path`, `path` or `key=value`). */
function secretKeys(name: string): string[] {
  const generator = kustomization.secretGenerator?.find((secret) => secret.name === name);
  if (!generator) throw new Error(`no secret "${name}" in the secretGenerator`);
  return [
    ...(generator.files ?? []).map((file) =>
      file.includes('=') ? file.split('=')[0] : posix.basename(file),
    ),
    ...(generator.literals ?? []).map((literal) => literal.split('=')[0]),
  ] as string[];
}

/** What a file path in a container reaches: the volume mounted above it and the file's key in it. */
function mountedFile(
  pod: PodSpec,
  container: Container,
  path: string,
): { volume: Volume; key: string; mount: Mount } {
  const mount = (container.volumeMounts ?? []).find((candidate) =>
    path.startsWith(`${candidate.mountPath}/`),
  );
  if (!mount) throw new Error(`${container.name}: nothing is mounted above ${path}`);
  const volume = (pod.volumes ?? []).find((candidate) => candidate.name === mount.name);
  if (!volume) throw new Error(`${container.name}: mount "${mount.name}" names no volume`);
  return { volume, mount, key: posix.relative(mount.mountPath, path) };
}

function containerPort(container: Container, port: string | number): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((candidate) => candidate.name === port)?.containerPort;
}

function selects(selector: Labels | undefined, labels: Labels): boolean {
  return Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);
}

function bytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (!match) throw new Error(`unreadable quantity "${quantity}"`);
  const unit: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
  return Number(match[1]) * (unit[match[2] ?? ''] ?? 1);
}

// ---------------------------------------------------------------------------------------------

describe('kustomization.yaml', () => {
  it('lists every manifest of deploy/kubernetes, and each parses as Kubernetes objects', () => {
    expect([...kustomization.resources].sort()).toEqual([...manifestFiles].sort());
    for (const object of objects) {
      expect(object.apiVersion, JSON.stringify(object.metadata)).toEqual(expect.any(String));
      expect(object.kind).toEqual(expect.any(String));
      expect(object.metadata.name).toEqual(expect.any(String));
    }
  });

  it('commits no secret: they are generated from files under secrets/, which git ignores, and a literal holds no password', () => {
    expect(objects.filter((object) => object.kind === 'Secret')).toEqual([]);
    const gitignore = readFileSync(join(root, '.gitignore'), 'utf8').split('\n');
    expect(gitignore).toContain('secrets/');
    for (const secret of kustomization.secretGenerator ?? []) {
      for (const file of secret.files ?? [])
        expect(file.split('=').at(-1), secret.name).toMatch(/^secrets\//);
      for (const literal of secret.literals ?? []) expect(literal, secret.name).not.toMatch(/@|password/i);
    }
  });
});

describe('the nightshift workloads', () => {
  it('run the image the Dockerfile builds, through its entrypoint, as roles the CLI accepts', () => {
    expect(nightshift.map((entry) => entry.role).sort()).toEqual(['scheduler', 'worker']);
    for (const { container } of nightshift) {
      expect(container.image, container.name).toBe(composeImage);
      // `command` would replace the image's ENTRYPOINT, the nightshift CLI
      expect(container.command, container.name).toBeUndefined();
      expect(cliProblem(container.args ?? []), (container.args ?? []).join(' ')).toBeUndefined();
    }
  });

  it('run at least two schedulers (peers: both enqueue a tick, it makes one run), so one survives a node', () => {
    expect(role('scheduler').object.kind).toBe('Deployment');
    expect(role('scheduler').object.spec?.replicas).toBeGreaterThanOrEqual(2);
    expect(role('worker').object.kind).toBe('Deployment');
  });

  it('set only variables the code reads (or the policy does), to values its settings schema parses', () => {
    const policyVariables = [...policyText().matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g)].map((match) => match[1]);
    for (const { container } of nightshift) {
      const unknown = [...envOf(container).keys()].filter(
        (name) => !VARIABLES.includes(name) && !policyVariables.includes(name),
      );
      expect(unknown, container.name).toEqual([]);
      expect(() => settingsOf(container), container.name).not.toThrow();
    }
  });

  it('set every variable the policy reads, in the schedulers and the workers alike', () => {
    const variables = [...policyText().matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g)].map(
      (match) => match[1] as string,
    );
    for (const { container } of nightshift)
      for (const variable of variables)
        expect(envOf(container).has(variable), `${container.name} ${variable}`).toBe(true);
  });

  it('hand the API key to the workers only, as a file of a mounted secret that has that key', () => {
    const { pod, container } = role('worker');
    const env = envOf(container);
    expect(env.has('NIGHTSHIFT_API_KEY')).toBe(false);
    const path = env.get('NIGHTSHIFT_API_KEY_FILE')?.value ?? '';
    const { volume, key, mount } = mountedFile(pod, container, path);
    expect(mount.readOnly).toBe(true);
    expect(secretKeys(volume.secret?.secretName ?? '')).toContain(key);
    expect(envOf(role('scheduler').container).has('NIGHTSHIFT_API_KEY_FILE')).toBe(false);
    expect(envOf(role('scheduler').container).has('NIGHTSHIFT_API_KEY')).toBe(false);
  });

  it('give every role the ops token as a file of a mounted secret, never as a value', () => {
    for (const { pod, container } of nightshift) {
      const env = envOf(container);
      expect(env.has('NIGHTSHIFT_UI_TOKEN'), container.name).toBe(false);
      const { volume, key, mount } = mountedFile(
        pod,
        container,
        env.get('NIGHTSHIFT_UI_TOKEN_FILE')?.value ?? '',
      );
      expect(mount.readOnly, container.name).toBe(true);
      expect(secretKeys(volume.secret?.secretName ?? ''), container.name).toContain(key);
    }
  });

  it('give the schedulers and the workers one policy key, as a file of a mounted secret, never as a value', () => {
    const secrets = nightshift.map(({ pod, container }) => {
      const env = envOf(container);
      expect(env.has('NIGHTSHIFT_POLICY_KEY'), container.name).toBe(false);
      const path = env.get('NIGHTSHIFT_POLICY_KEY_FILE')?.value ?? '';
      const { volume, key, mount } = mountedFile(pod, container, path);
      expect(mount.readOnly, container.name).toBe(true);
      const secretName = volume.secret?.secretName ?? '';
      expect(secretKeys(secretName), container.name).toContain(key);
      return secretName;
    });
    // the workers check what the schedulers sign: the same key
    expect(new Set(secrets).size).toBe(1);
    const generator = kustomization.secretGenerator?.find((secret) => secret.name === secrets[0]);
    expect(generator?.literals ?? []).toEqual([]);
  });

  it('run no secret sink command (NIGHTSHIFT_SINK_COMMANDS=none): the workers refuse one, the schedulers a policy naming one', () => {
    for (const { container } of nightshift)
      expect(settingsOf(container).sinks.commands, container.name).toEqual(new Set());
  });

  it('read REDIS_URL from a secret the kustomization generates', () => {
    for (const { container } of nightshift) {
      const reference = envOf(container).get('REDIS_URL')?.valueFrom?.secretKeyRef;
      expect(reference, container.name).toBeDefined();
      expect(secretKeys(reference?.name ?? ''), container.name).toContain(reference?.key);
    }
  });

  it('give the scheduler the ConfigMap policy at the path of its argument, as a folder mount so edits reach it', () => {
    const { pod, container } = role('scheduler');
    const path = container.args?.[1] ?? '';
    const { volume, key, mount } = mountedFile(pod, container, path);
    // a subPath mount never sees the ConfigMap's updates, so the scheduler would never reload
    expect(mount.subPath).toBeUndefined();
    expect(mount.readOnly).toBe(true);
    expect(volume.configMap?.name).toBe(policyConfigMap().metadata.name);
    expect(Object.keys(policyConfigMap().data ?? {})).toContain(key);
  });

  it('ship a ConfigMap policy that validates', () => {
    expect(() =>
      parsePolicy(policyText(), '/config/policy.yaml', { registry: actionRegistry, env: {} }),
    ).not.toThrow();
  });
});

function policyConfigMap(): KubeObject {
  const maps = objects.filter((object) => object.kind === 'ConfigMap');
  expect(maps).toHaveLength(1);
  return maps[0] as KubeObject;
}

function policyText(): string {
  return Object.values(policyConfigMap().data ?? {})[0] ?? '';
}

describe('the ops server in the pods', () => {
  it('binds beyond loopback, where the kubelet reaches it, with the token that bind requires', () => {
    for (const { container } of nightshift) {
      const settings = settingsOf(container);
      const host = settings.http.host ?? '';
      expect(isLoopback(host), container.name).toBe(false);
      expect(() => assertSafeBind(host, undefined)).toThrow(/token/);
      expect(settings.http.uiTokenFile, container.name).toEqual(expect.any(String));
    }
  });

  it('is probed at /healthz and /readyz on the port it listens on, DEFAULT_OPS_PORT', () => {
    for (const { container } of nightshift) {
      expect(settingsOf(container).http.port, container.name).toBe(DEFAULT_OPS_PORT);
      const liveness = container.livenessProbe?.httpGet;
      const readiness = container.readinessProbe?.httpGet;
      expect(liveness?.path, container.name).toBe('/healthz');
      expect(readiness?.path, container.name).toBe('/readyz');
      for (const probe of [liveness, readiness]) {
        expect(containerPort(container, probe?.port ?? ''), container.name).toBe(DEFAULT_OPS_PORT);
        // the probes present no token, and need none
        expect(probe?.httpHeaders, container.name).toBeUndefined();
      }
    }
  });

  it('is scraped at /metrics on that port (prometheus.io annotations)', () => {
    for (const { object, container } of nightshift) {
      const annotations = object.spec?.template?.metadata.annotations ?? {};
      expect(annotations['prometheus.io/scrape'], container.name).toBe('true');
      expect(Number(annotations['prometheus.io/port']), container.name).toBe(DEFAULT_OPS_PORT);
      expect(annotations['prometheus.io/path'], container.name).toBe('/metrics');
    }
  });

  it('is reached through a Service per role, on the ops port', () => {
    const services = objects.filter((object) => object.kind === 'Service');
    for (const { object, container } of nightshift) {
      const labels = object.spec?.template?.metadata.labels ?? {};
      const service = services.find((candidate) => selects(candidate.spec?.selector, labels));
      expect(service, container.name).toBeDefined();
      const ports = (service?.spec?.ports ?? []).map((port) => containerPort(container, port.targetPort));
      expect(ports, container.name).toContain(DEFAULT_OPS_PORT);
    }
  });

  describe('answers', () => {
    let server: OpsServer;
    const token = 'k8s-test-token';
    beforeAll(async () => {
      // a Redis that never connected: /readyz answers 503, which is all a probe needs to be answered
      const redis = { status: 'wait' } as unknown as Redis;
      server = await startOpsServer({
        host: '127.0.0.1',
        port: 0,
        token,
        redis,
        metrics: new Metrics({ processMetrics: false }),
      });
    });
    afterAll(() => server.close());

    it('the probes without the token, and the scrape only with it', async () => {
      const { container } = role('worker');
      const get = (path: string, headers: Record<string, string> = {}) =>
        fetch(`${server.url}${path}`, { headers }).then((response) => response.status);
      expect(await get(container.livenessProbe?.httpGet?.path ?? '')).toBe(200);
      expect(await get(container.readinessProbe?.httpGet?.path ?? '')).toBe(503);
      const metrics =
        role('worker').object.spec?.template?.metadata.annotations?.['prometheus.io/path'] ?? '';
      expect(await get(metrics)).toBe(401);
      expect(await get(metrics, { authorization: `Bearer ${token}` })).toBe(200);
    });
  });
});

/** The bundled Redis: its StatefulSet, its pod and its container. */
function bundledRedis(): { object: KubeObject; pod: PodSpec; container: Container } {
  const object = workloads.find((candidate) => candidate.kind === 'StatefulSet') as KubeObject;
  const pod = podOf(object);
  return { object, pod, container: pod.containers[0] as Container };
}

describe('the bundled Redis', () => {
  it('keeps its data on a volume claim with append-only persistence and never evicts, as BullMQ needs', () => {
    const { object: redis, container } = bundledRedis();
    const command = redisCommand([...(container.command ?? []), ...(container.args ?? [])]);
    expect(command.flag('--appendonly')).toBe('yes');
    expect(command.flag('--maxmemory-policy')).toBe('noeviction');
    const claims = (redis.spec?.volumeClaimTemplates ?? []).map((claim) => claim.metadata.name);
    const data = (container.volumeMounts ?? []).find((mount) => mount.mountPath === '/data');
    expect(claims).toContain(data?.name);
  });

  it('is where the REDIS_URL of every role points: its Service, on its port', () => {
    const redis = workloads.find((object) => object.kind === 'StatefulSet') as KubeObject;
    for (const { container } of nightshift) {
      const reference = envOf(container).get('REDIS_URL')?.valueFrom?.secretKeyRef;
      const generator = kustomization.secretGenerator?.find((secret) => secret.name === reference?.name);
      const literal = generator?.literals?.find((entry) => entry.startsWith(`${reference?.key}=`)) ?? '';
      const url = new URL(literal.slice(literal.indexOf('=') + 1));
      const service = objects.find(
        (object) => object.kind === 'Service' && object.metadata.name === url.hostname,
      );
      expect(
        selects(service?.spec?.selector, redis.spec?.template?.metadata.labels ?? {}),
        url.hostname,
      ).toBe(true);
      expect(
        service?.spec?.ports?.map((port) => port.port),
        container.name,
      ).toContain(Number(url.port));
    }
  });
});

describe('the Redis password', () => {
  /** The generated secret and key a file path in a container comes from. */
  function secretFile(pod: PodSpec, container: Container, path: string) {
    const { volume, key, mount } = mountedFile(pod, container, path);
    const secret = volume.secret as { secretName: string; items?: { key: string; path: string }[] };
    const item = secret.items?.find((candidate) => candidate.path === key);
    return { secret: secret.secretName, key: item?.key ?? key, readOnly: mount.readOnly };
  }

  it('is required by the bundled Redis, which reads it from a key of a generated secret, as configuration on standard input', () => {
    const { pod, container } = bundledRedis();
    const command = redisCommand(container.command ?? []);
    // never an argument or a variable of the process: `ps` and /proc would show it
    expect(command.flag('--requirepass')).toBeUndefined();
    expect((container.env ?? []).map((variable) => variable.name)).toEqual([]);
    const file = command.passwordFile;
    expect(file, 'requirepass $(cat <file>) in the configuration').toEqual(expect.any(String));
    const source = secretFile(pod, container, file ?? '');
    expect(source.readOnly).toBe(true);
    expect(secretKeys(source.secret)).toContain(source.key);
    const generator = kustomization.secretGenerator?.find((secret) => secret.name === source.secret);
    expect(generator?.files).toContain(`${source.key}=secrets/redis-password`);
  });

  it('is what the bundled Redis is probed ready with: PONG, not a NOAUTH that redis-cli exits 0 on', () => {
    const { container } = bundledRedis();
    const probe = (container.readinessProbe?.exec?.command ?? []).join(' ');
    expect(probe).toContain(`REDISCLI_AUTH="$(cat ${redisCommand(container.command ?? []).passwordFile})"`);
    expect(probe).toMatch(/redis-cli ping \| grep -qx PONG$/);
  });

  it('reaches every role from the same secret and key, as a file of a mounted secret, never in REDIS_URL', () => {
    const redis = bundledRedis();
    const redisSource = secretFile(
      redis.pod,
      redis.container,
      redisCommand(redis.container.command ?? []).passwordFile ?? '',
    );
    for (const { pod, container } of nightshift) {
      const settings = settingsOf(container);
      expect(settings.redis.password, container.name).toBeUndefined();
      const source = secretFile(pod, container, settings.redis.passwordFile ?? '');
      expect(source, container.name).toEqual(redisSource);
    }
  });
});

/** Whether `selector` selects `labels`; an empty selector selects everything. */
function matches(selector: LabelSelector | undefined, labels: Labels): boolean {
  const byLabel = Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpression = (selector?.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const value = labels[key];
    if (operator === 'In') return value !== undefined && values.includes(value);
    if (operator === 'NotIn') return value === undefined || !values.includes(value);
    return operator === 'Exists' ? value !== undefined : value === undefined;
  });
  return byLabel && byExpression;
}

const policies = objects.filter((object) => object.kind === 'NetworkPolicy');

/** The policies of `type` that select a pod with `labels`: any one isolates it; their rules allow. */
function policiesFor(labels: Labels, type: 'Ingress' | 'Egress'): KubeObject[] {
  return policies.filter(
    (policy) => matches(policy.spec?.podSelector, labels) && policy.spec?.policyTypes?.includes(type),
  );
}

function ingressRules(labels: Labels): PolicyRule[] {
  return policiesFor(labels, 'Ingress').flatMap((policy) => policy.spec?.ingress ?? []);
}

describe('the network policies', () => {
  const podLabels = (object: KubeObject) => object.spec?.template?.metadata.labels ?? {};

  it("deny every connection to the namespace's pods that no policy allows", () => {
    const denyAll = policies.filter(
      (policy) =>
        Object.keys(policy.spec?.podSelector ?? {}).length === 0 &&
        policy.spec?.policyTypes?.includes('Ingress') &&
        (policy.spec?.ingress ?? []).length === 0,
    );
    expect(denyAll.map((policy) => policy.metadata.name)).toHaveLength(1);
    for (const object of workloads)
      expect(policiesFor(podLabels(object), 'Ingress').length, object.metadata.name).toBeGreaterThan(0);
  });

  it('let only the schedulers and the workers reach Redis, on its port, and Redis reach nothing', () => {
    const redis = bundledRedis();
    const labels = podLabels(redis.object);
    const rules = ingressRules(labels);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      // a rule without ports allows every port
      expect(rule.ports?.length).toBeGreaterThan(0);
      for (const port of rule.ports ?? []) expect(containerPort(redis.container, port.port ?? '')).toBe(6379);
      for (const peer of rule.from ?? []) {
        // only pods of this namespace, chosen by their labels
        expect(peer.namespaceSelector).toBeUndefined();
        expect(peer.ipBlock).toBeUndefined();
        expect(Object.keys(peer.podSelector ?? {}).length).toBeGreaterThan(0);
        expect(matches(peer.podSelector, labels), 'Redis itself').toBe(false);
        expect(matches(peer.podSelector, { app: 'anything-else' })).toBe(false);
      }
      expect(rule.from?.length, 'a rule without from allows every peer').toBeGreaterThan(0);
    }
    for (const { object, container } of nightshift)
      expect(
        rules.some((rule) => (rule.from ?? []).some((peer) => matches(peer.podSelector, podLabels(object)))),
        container.name,
      ).toBe(true);
    const egress = policiesFor(labels, 'Egress');
    expect(egress.length).toBeGreaterThan(0);
    expect(egress.flatMap((policy) => policy.spec?.egress ?? [])).toEqual([]);
  });

  it('let only the namespace labelled to scrape them reach the schedulers and workers, on the ops port alone', () => {
    const text = readFileSync(join(root, DIR, 'network-policies.yaml'), 'utf8');
    for (const { object, container } of nightshift) {
      const rules = ingressRules(podLabels(object));
      expect(rules.length, container.name).toBeGreaterThan(0);
      for (const rule of rules) {
        expect(rule.ports?.length, container.name).toBeGreaterThan(0);
        for (const port of rule.ports ?? [])
          expect(containerPort(container, port.port ?? ''), container.name).toBe(DEFAULT_OPS_PORT);
        expect(rule.from?.length, container.name).toBeGreaterThan(0);
        for (const peer of rule.from ?? []) {
          expect(peer.ipBlock, container.name).toBeUndefined();
          const label = Object.entries(peer.namespaceSelector?.matchLabels ?? {});
          expect(label, container.name).toEqual([['nightshift/scrapes-ops', 'true']]);
          // documented where it is set: the command that labels the scraping namespace
          expect(text).toContain(`kubectl label namespace monitoring ${label[0]?.[0]}=${label[0]?.[1]}`);
        }
      }
    }
  });
});

describe('every pod', () => {
  it('gets the time its role takes to stop after SIGTERM (terminationGracePeriodSeconds)', () => {
    const scheduler = role('scheduler');
    expect(scheduler.pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(SHUTDOWN_LIMIT_MS / 1000);
    const worker = role('worker');
    // Redis up: the whole grace period, the longest a worker's shutdown may take
    const budget = shutdownBudget(settingsOf(worker.container), { ready: true });
    expect(worker.pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(budget.limitMs / 1000);
  });

  it('runs as a non-root user that cannot escalate, on a read-only root file system, with no capabilities', () => {
    for (const object of workloads) {
      const pod = podOf(object);
      expect(pod.securityContext?.runAsNonRoot, object.metadata.name).toBe(true);
      expect(pod.securityContext?.runAsUser, object.metadata.name).toBeGreaterThan(0);
      for (const container of pod.containers) {
        expect(container.securityContext?.allowPrivilegeEscalation, container.name).toBe(false);
        expect(container.securityContext?.readOnlyRootFilesystem, container.name).toBe(true);
        expect(container.securityContext?.capabilities?.drop, container.name).toEqual(['ALL']);
      }
    }
  });

  it("runs nightshift as the image's own user, node (uid 1000 in the node images)", () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect([...dockerfile.matchAll(/^USER\s+(\S+)/gm)].at(-1)?.[1]).toBe('node');
    for (const { pod, container } of nightshift)
      expect(pod.securityContext?.runAsUser, container.name).toBe(1000);
  });

  it('asks for CPU and memory and caps memory at no less than it asks for', () => {
    for (const object of workloads)
      for (const container of podOf(object).containers) {
        const { requests = {}, limits = {} } = container.resources ?? {};
        expect(requests.cpu, container.name).toEqual(expect.any(String));
        expect(bytes(limits.memory ?? '0'), container.name).toBeGreaterThanOrEqual(
          bytes(requests.memory ?? ''),
        );
      }
  });

  it('is selected by its own workload, and by the budgets that name it', () => {
    for (const object of workloads)
      expect(selects(object.spec?.selector?.matchLabels, object.spec?.template?.metadata.labels ?? {})).toBe(
        true,
      );
    for (const budget of objects.filter((object) => object.kind === 'PodDisruptionBudget')) {
      const matched = workloads.filter((object) =>
        selects(budget.spec?.selector?.matchLabels, object.spec?.template?.metadata.labels ?? {}),
      );
      expect(matched, budget.metadata.name).toHaveLength(1);
    }
  });
});
