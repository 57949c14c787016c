import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadSettings, VARIABLES } from '../../src/config/index.js';
import { DEFAULT_API_KEY, DEFAULT_BEARER_TOKEN } from '../../src/sim/index.js';
import { cliProblem } from '../helpers/cli-problem.js';
import { expectPasswordRequired } from '../helpers/deploy-redis.js';
import { redisCommand } from '../helpers/redis-command.js';

/**
 * No Docker engine runs the tests, so these read the container files and hold them to the code:
 * every command is one the CLI accepts, every variable one the code reads, every path one the
 * image or the mounts provide.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// Compose files

/** Compose's `!reset` (an override removes what the base file set). */
const RESET = Symbol('!reset');

/** Compose's `!override` (an override's value replaces the base file's instead of merging with it). */
class Override {
  constructor(readonly value: unknown) {}
}

type Yaml = Record<string, unknown>;

function readCompose(file: string): Yaml {
  return parse(readFileSync(join(root, file), 'utf8'), {
    merge: true,
    customTags: [
      { tag: '!reset', resolve: () => RESET },
      { tag: '!reset', collection: 'seq', resolve: () => RESET },
      { tag: '!reset', collection: 'map', resolve: () => RESET },
      { tag: '!override', collection: 'seq', resolve: (value) => new Override(value.toJSON()) },
      { tag: '!override', collection: 'map', resolve: (value) => new Override(value.toJSON()) },
    ],
  }) as Yaml;
}

/** Compose's merge of an override: mappings merge, `!reset` removes, `!override` and commands replace, other lists append. */
function mergeCompose(base: unknown, override: unknown, key = ''): unknown {
  if (override === RESET) return undefined;
  if (override instanceof Override) return override.value;
  if (Array.isArray(override)) {
    if (key === 'command' || key === 'entrypoint' || !Array.isArray(base)) return override;
    return [...base, ...override];
  }
  if (isMap(override) && isMap(base)) {
    const merged: Yaml = { ...base };
    for (const [name, value] of Object.entries(override)) {
      const next = mergeCompose(base[name], value, name);
      if (next === undefined) delete merged[name];
      else merged[name] = next;
    }
    return merged;
  }
  return override;
}

function isMap(value: unknown): value is Yaml {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const base = readCompose('docker-compose.yml');
const demoOverride = readCompose('docker-compose.demo.yml');
const demo = mergeCompose(base, demoOverride) as Yaml;

function servicesOf(compose: Yaml): Record<string, Yaml> {
  return compose.services as Record<string, Yaml>;
}

function service(compose: Yaml, name: string): Yaml {
  const found = servicesOf(compose)[name];
  if (!found) throw new Error(`no service "${name}"`);
  return found;
}

/** The services that run the nightshift image (everything but Redis). */
function nightshiftServices(compose: Yaml): [string, Yaml][] {
  return Object.entries(servicesOf(compose)).filter(
    ([, definition]) => String(definition.image ?? '').startsWith('nightshift') || 'build' in definition,
  );
}

function argvOf(definition: Yaml): string[] {
  const command = definition.command;
  if (typeof command === 'string') return command.trim().split(/\s+/);
  if (Array.isArray(command)) return command.map(String);
  throw new Error('a nightshift service needs a command');
}

function environmentOf(definition: Yaml): Record<string, string | null> {
  const environment = definition.environment ?? {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((entry: string) => {
        const equals = entry.indexOf('=');
        return equals === -1 ? [entry, null] : [entry.slice(0, equals), entry.slice(equals + 1)];
      }),
    );
  }
  return environment as Record<string, string | null>;
}

function flagValue(argv: readonly string[], flag: string): string | undefined {
  const index = argv.indexOf(flag);
  return index === -1 ? undefined : argv[index + 1];
}

// ---------------------------------------------------------------------------------------------
// The CLI and the code

/** Every environment variable the program reads: the names its one settings schema declares. */
const readByCode = new Set(VARIABLES);
const ownVariable = (name: string) => name === 'REDIS_URL' || name.startsWith('NIGHTSHIFT_');

function seconds(duration: string): number {
  const match = /^(\d+)(ms|s|m)$/.exec(duration);
  if (!match) throw new Error(`unreadable duration "${duration}"`);
  const value = Number(match[1]);
  return match[2] === 'ms' ? value / 1000 : match[2] === 'm' ? value * 60 : value;
}

/** The repository file a container path reaches through the service's bind mounts, if any. */
function hostPathOf(
  definition: Yaml,
  containerPath: string,
): { file: string; readOnly: boolean } | undefined {
  for (const volume of (definition.volumes ?? []) as string[]) {
    const [source = '', target = '', mode = ''] = volume.split(':');
    if (!source.startsWith('.') || !containerPath.startsWith(`${target}/`)) continue;
    const file = posix.join(source, posix.relative(target, containerPath));
    return { file, readOnly: mode.split(',').includes('ro') };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Dockerfile

interface Instruction {
  keyword: string;
  args: string;
}

function readDockerfile(): Instruction[] {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const lines = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n');
  return lines
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const keyword = line.split(/\s+/, 1)[0] ?? '';
      return { keyword: keyword.toUpperCase(), args: line.slice(keyword.length).trim() };
    });
}

const dockerfile = readDockerfile();
const stages: Instruction[][] = [];
for (const instruction of dockerfile) {
  if (instruction.keyword === 'FROM') stages.push([]);
  stages.at(-1)?.push(instruction);
}
const runtimeStage = stages.at(-1) ?? [];

function execForm(keyword: string, stage: Instruction[] = dockerfile): string[] {
  const instruction = stage.filter((candidate) => candidate.keyword === keyword).at(-1);
  if (!instruction) throw new Error(`no ${keyword} in the Dockerfile`);
  return JSON.parse(instruction.args) as string[];
}

function healthcheckArgv(): string[] {
  const instruction = runtimeStage.find((candidate) => candidate.keyword === 'HEALTHCHECK');
  if (!instruction) throw new Error('no HEALTHCHECK in the runtime stage');
  const cmd = /(?:^|\s)CMD\s+(\[.*\])\s*$/.exec(instruction.args);
  if (!cmd) throw new Error('HEALTHCHECK must use the exec form: CMD ["node", "-e", "…"]');
  return JSON.parse(cmd[1] as string) as string[];
}

/** Runs the image's health check against a local server answering `status` on /healthz. */
async function healthcheckAgainst(status: number): Promise<number> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? '');
    response.writeHead(request.url === '/healthz' ? status : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const [program, ...args] = healthcheckArgv();
  expect(program).toBe('node');
  try {
    await run(process.execPath, args, { env: { ...process.env, NIGHTSHIFT_HTTP_PORT: String(port) } });
    return 0;
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  } finally {
    server.close();
    expect(requests).toContain('/healthz');
  }
}

// ---------------------------------------------------------------------------------------------

describe('docker-compose.yml', () => {
  it('runs redis, a scheduler and workers by default, and the simulator only under the demo profile', () => {
    for (const name of ['redis', 'scheduler', 'worker']) {
      expect(service(base, name).profiles, name).toBeUndefined();
    }
    expect(service(base, 'sim').profiles).toEqual(['demo']);
  });

  it('keeps Redis data on a named volume with appendonly on, from a Redis 7 image pinned by digest', () => {
    const redis = service(base, 'redis');
    expect(String(redis.image)).toMatch(/^redis:7(-[a-z]+)?@sha256:[0-9a-f]{64}$/);
    const command = redisCommand(argvOf(redis), true);
    expect(command.flag('--appendonly')).toBe('yes');
    expect(command.flag('--maxmemory-policy')).toBe('noeviction');
    const data = ((redis.volumes ?? []) as string[]).find((volume) => volume.endsWith(':/data'));
    expect(data).toBeDefined();
    expect(Object.keys((base.volumes ?? {}) as Yaml)).toContain(data?.split(':')[0]);
  });

  it('runs Redis with a password from a secret file, as configuration on standard input, and reports it healthy only when it answers PONG to that password', () => {
    const redis = service(base, 'redis');
    const command = redisCommand(argvOf(redis), true);
    expect(command.flag('--requirepass')).toBeUndefined();
    const secret = /^\/run\/secrets\/(.+)$/.exec(command.passwordFile ?? '')?.[1];
    expect(secret, 'requirepass $$(cat /run/secrets/<secret>)').toBeDefined();
    expect(redis.secrets).toContain(secret);
    expect(((base.secrets as Yaml)[secret as string] as Yaml).file).toMatch(/^\.\/secrets\//);
    const [kind, check] = (redis.healthcheck as Yaml).test as string[];
    expect(kind).toBe('CMD-SHELL');
    expect(check).toBe(`REDISCLI_AUTH="$$(cat ${command.passwordFile})" redis-cli ping | grep -qx PONG`);
  });

  it('starts the scheduler and the workers only once Redis is healthy, and points them at it with the password file Redis reads', () => {
    const password = redisCommand(argvOf(service(base, 'redis')), true).passwordFile;
    for (const name of ['scheduler', 'worker']) {
      const definition = service(base, name);
      const environment = environmentOf(definition);
      expect((definition.depends_on as Yaml).redis, name).toEqual({ condition: 'service_healthy' });
      expect(environment.REDIS_URL, name).toBe('redis://redis:6379');
      expect(environment.NIGHTSHIFT_REDIS_PASSWORD_FILE, name).toBe(password);
      expect(definition.secrets, name).toContain(/^\/run\/secrets\/(.+)$/.exec(password ?? '')?.[1]);
    }
  });

  it('runs every container as the Kubernetes manifests run their pods: read-only, no capability, no privilege escalation, Redis not as root', () => {
    for (const compose of [base, demo])
      for (const [name, definition] of Object.entries(servicesOf(compose))) {
        expect(definition.read_only, name).toBe(true);
        expect(definition.cap_drop, name).toEqual(['ALL']);
        expect(definition.security_opt, name).toContain('no-new-privileges:true');
      }
    // the image's `redis` user (uid 999): with no capability, its entrypoint could not switch to it
    expect(String(service(base, 'redis').user)).toMatch(/^999:\d+$/);
  });

  it('lets the worker scale (--scale worker=N): no container_name, no host ports', () => {
    const worker = service(base, 'worker');
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
  });

  it('gives the workers the runs in flight time to finish on shutdown (stop_grace_period > NIGHTSHIFT_SHUTDOWN_GRACE_MS)', () => {
    const grace = String(service(base, 'worker').stop_grace_period ?? '10s');
    expect(seconds(grace)).toBeGreaterThan(loadSettings({}).worker.shutdownGraceMs / 1000);
  });

  it('hands the API key to the worker as a Docker secret file, never as a variable, and to no one else', () => {
    const worker = service(base, 'worker');
    const environment = environmentOf(worker);
    const secret = /^\/run\/secrets\/(.+)$/.exec(environment.NIGHTSHIFT_API_KEY_FILE ?? '')?.[1];
    expect(secret).toBeDefined();
    expect(worker.secrets).toContain(secret);
    expect(((base.secrets as Yaml)[secret as string] as Yaml).file).toEqual(expect.any(String));
    expect(environment).not.toHaveProperty('NIGHTSHIFT_API_KEY');
    for (const [name, definition] of nightshiftServices(base).filter(([name]) => name !== 'worker')) {
      expect((definition.secrets ?? []) as string[], name).not.toContain(secret);
      expect(Object.keys(environmentOf(definition)), name).not.toContain('NIGHTSHIFT_API_KEY');
    }
  });

  it('serves the ops server of the scheduler and the workers to the compose network, behind the UI token from a secret', () => {
    for (const name of ['scheduler', 'worker']) {
      const definition = service(base, name);
      const environment = environmentOf(definition);
      expect(environment.NIGHTSHIFT_HTTP_HOST, name).toBe('0.0.0.0');
      const secret = /^\/run\/secrets\/(.+)$/.exec(environment.NIGHTSHIFT_UI_TOKEN_FILE ?? '')?.[1];
      expect(definition.secrets, name).toContain(secret);
      expect(((base.secrets as Yaml)[secret as string] as Yaml).file, name).toEqual(expect.any(String));
      expect(environment, name).not.toHaveProperty('NIGHTSHIFT_UI_TOKEN');
    }
    // the dashboard on the host's loopback only, through the one scheduler
    expect(service(base, 'scheduler').ports).toEqual(['127.0.0.1:9464:9464']);
  });

  it('gives the scheduler and the workers the one policy key, as a Docker secret file, never as a variable', () => {
    const secrets = ['scheduler', 'worker'].map((name) => {
      const definition = service(base, name);
      const environment = environmentOf(definition);
      expect(environment, name).not.toHaveProperty('NIGHTSHIFT_POLICY_KEY');
      const secret = /^\/run\/secrets\/(.+)$/.exec(environment.NIGHTSHIFT_POLICY_KEY_FILE ?? '')?.[1];
      expect(definition.secrets, name).toContain(secret);
      expect(((base.secrets as Yaml)[secret as string] as Yaml).file, name).toMatch(/^\.\/secrets\//);
      return secret;
    });
    expect(new Set(secrets).size).toBe(1);
  });

  it('refuses to start without the variables config/policy.yaml reads, instead of a scheduler that exits again and again', () => {
    const text = readFileSync(join(root, 'config/policy.yaml'), 'utf8');
    const variables = [...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g)].map((match) => match[1] as string);
    expect(variables.length).toBeGreaterThan(0);
    for (const name of ['scheduler', 'worker'])
      for (const variable of variables)
        expect(environmentOf(service(base, name))[variable], `${name} ${variable}`).toMatch(
          new RegExp(`^\\$\\{${variable}:\\?.+\\}$`),
        );
  });

  it('refuses to start without NIGHTSHIFT_API_URL instead of starting a worker that cannot work', () => {
    expect(environmentOf(service(base, 'worker')).NIGHTSHIFT_API_URL).toMatch(
      /^\$\{NIGHTSHIFT_API_URL:\?.+\}$/,
    );
  });

  it('mounts the policy the scheduler is started with read-only from ./config, where the file exists', () => {
    const scheduler = service(base, 'scheduler');
    const policy = argvOf(scheduler)[1] as string;
    const mounted = hostPathOf(scheduler, policy);
    expect(mounted, `${policy} is not under a bind mount`).toBeDefined();
    expect(mounted?.readOnly).toBe(true);
    expect(existsSync(join(root, mounted?.file ?? '')), mounted?.file).toBe(true);
  });
});

describe("docker-compose.yml's Redis, run here by its own command", () => {
  it('requires the password from the secret file, which /proc shows in neither its arguments nor its environment, is healthy only with it, and nightshift reaches it with the file', async () => {
    const redis = service(base, 'redis');
    const check = ((redis.healthcheck as Yaml).test as string[])[1] ?? '';
    await expectPasswordRequired(
      redisCommand(argvOf(redis), true),
      check.split('$$').join('$'),
      'compose-redis-password-5e1b',
    );
  });
});

describe('docker-compose.demo.yml (with docker-compose.yml, --profile demo)', () => {
  it('starts the simulator on all interfaces of its container, with a health check', () => {
    const argv = argvOf(service(demo, 'sim'));
    expect(flagValue(argv, '--host')).toBe('0.0.0.0');
    expect(Number(flagValue(argv, '--port'))).toBeGreaterThan(0);
    expect(service(demo, 'sim').healthcheck).toBeDefined();
  });

  it("points the workers at the sim service's port with the simulator's own credentials", () => {
    const port = flagValue(argvOf(service(demo, 'sim')), '--port');
    const worker = service(demo, 'worker');
    const environment = environmentOf(worker);
    expect(environment.NIGHTSHIFT_API_URL).toBe(`http://sim:${port}`);
    // plain http:// beyond loopback: the worker starts only with the opt-in
    const api = { NIGHTSHIFT_API_URL: environment.NIGHTSHIFT_API_URL ?? '' };
    expect(() => loadSettings(api)).toThrow(/NIGHTSHIFT_ALLOW_INSECURE_HTTP=true/);
    expect(environment.NIGHTSHIFT_ALLOW_INSECURE_HTTP).toBe('true');
    expect(() => loadSettings({ ...api, NIGHTSHIFT_ALLOW_INSECURE_HTTP: 'true' })).not.toThrow();
    expect(environment.NIGHTSHIFT_API_KEY).toBe(DEFAULT_API_KEY);
    expect(environment.NIGHTSHIFT_BEARER_TOKEN).toBe(DEFAULT_BEARER_TOKEN);
    expect(environment).not.toHaveProperty('NIGHTSHIFT_API_KEY_FILE');
    expect(worker.secrets).toEqual(['redis_password']);
    expect((worker.depends_on as Yaml).sim).toEqual({ condition: 'service_healthy' });
    expect((worker.depends_on as Yaml).redis).toEqual({ condition: 'service_healthy' });
  });

  it('needs no secret file but the Redis password: the scheduler and the workers take the demo dashboard password and one demo policy key instead', () => {
    for (const name of ['scheduler', 'worker']) {
      const definition = service(demo, name);
      const environment = environmentOf(definition);
      expect(definition.secrets, name).toEqual(['redis_password']);
      expect(environment.NIGHTSHIFT_REDIS_PASSWORD_FILE, name).toBe('/run/secrets/redis_password');
      expect(environment, name).not.toHaveProperty('NIGHTSHIFT_UI_TOKEN_FILE');
      expect(environment.NIGHTSHIFT_UI_TOKEN, name).toBe('nightshift-demo');
      expect(environment, name).not.toHaveProperty('NIGHTSHIFT_POLICY_KEY_FILE');
      // a key the settings take, the same for both roles
      const key = environment.NIGHTSHIFT_POLICY_KEY ?? undefined;
      expect(loadSettings({ NIGHTSHIFT_POLICY_KEY: key }).policy.keys, name).toEqual([key]);
      expect(key, name).toBe(environmentOf(service(demo, 'scheduler')).NIGHTSHIFT_POLICY_KEY);
      expect(environment.NIGHTSHIFT_HTTP_HOST, name).toBe('0.0.0.0');
    }
  });

  it('schedules the policy written for the simulator, from the read-only ./config mount', () => {
    const scheduler = service(demo, 'scheduler');
    const policy = argvOf(scheduler)[1] as string;
    expect(hostPathOf(scheduler, policy)).toEqual({ file: 'config/examples/simulator.yaml', readOnly: true });
    expect(existsSync(join(root, 'config/examples/simulator.yaml'))).toBe(true);
  });
});

describe('commands and variables the container files use', () => {
  const files: [string, Yaml][] = [
    ['docker-compose.yml', base],
    ['docker-compose.yml + docker-compose.demo.yml', demo],
  ];

  it('knows the variables the code reads (guards the list itself)', () => {
    for (const name of ['REDIS_URL', 'NIGHTSHIFT_API_URL', 'NIGHTSHIFT_API_KEY', 'NIGHTSHIFT_API_KEY_FILE']) {
      expect(readByCode, name).toContain(name);
    }
    expect(readByCode).toContain('NIGHTSHIFT_SHUTDOWN_GRACE_MS');
  });

  it.each(files)(
    '%s: every service command is a nightshift subcommand with flags it accepts',
    (_file, compose) => {
      const services = nightshiftServices(compose);
      expect(services.map(([name]) => name).sort()).toEqual(['scheduler', 'sim', 'worker']);
      for (const [name, definition] of services) {
        expect(cliProblem(argvOf(definition)), `${name}: ${argvOf(definition).join(' ')}`).toBeUndefined();
      }
    },
  );

  it.each(files)(
    '%s: every NIGHTSHIFT_* and REDIS_URL variable set is one the code reads',
    (_file, compose) => {
      for (const [name, definition] of Object.entries(servicesOf(compose))) {
        const unknown = Object.keys(environmentOf(definition))
          .filter(ownVariable)
          .filter((variable) => !readByCode.has(variable));
        expect(unknown, name).toEqual([]);
      }
    },
  );

  it('the cliProblem check itself refuses a made-up command, a made-up flag and a missing argument', () => {
    expect(cliProblem(['serve'])).toMatch(/not a nightshift command/);
    expect(cliProblem(['sim', '--listen', '0.0.0.0'])).toMatch(/does not accept --listen/);
    expect(cliProblem(['scheduler'])).toMatch(/takes policy/);
    expect(cliProblem(['sim', '--port'])).toMatch(/argument missing/);
  });
});

describe('Dockerfile', () => {
  it('builds in one stage and runs from another, both on one Node LTS image pinned to its major and by digest', () => {
    const froms = dockerfile.filter((instruction) => instruction.keyword === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms)
      expect(from.args).toMatch(/^node:(2[02468])-[a-z0-9.-]+@sha256:[0-9a-f]{64}(\s+AS\s+\w+)?$/i);
    // one base for both stages: the build's node_modules run on the runtime's Node
    expect(new Set(froms.map((from) => from.args.split(/\s+/)[0])).size).toBe(1);
  });

  it('installs with scripts off (prepare would build before the sources are copied) and only production dependencies at run time', () => {
    const installs = dockerfile.filter(
      (instruction) => instruction.keyword === 'RUN' && /\bnpm ci\b/.test(instruction.args),
    );
    expect(installs.length).toBeGreaterThanOrEqual(2);
    for (const install of installs) expect(install.args).toContain('--ignore-scripts');
    const runtimeInstall = runtimeStage.find(
      (instruction) => instruction.keyword === 'RUN' && /\bnpm ci\b/.test(instruction.args),
    );
    expect(runtimeInstall?.args).toContain('--omit=dev');
    expect(stages[0]?.some((instruction) => /\bnpm run build\b/.test(instruction.args))).toBe(true);
  });

  it('ships dist/ from the build stage with bin/, config/ and the package files', () => {
    const copies = runtimeStage
      .filter((instruction) => instruction.keyword === 'COPY')
      .map((copy) => copy.args);
    expect(copies.some((args) => /^--from=\w+\s+\/app\/dist\/?\s/.test(args))).toBe(true);
    for (const path of ['bin/', 'config/', 'package.json', 'package-lock.json']) {
      expect(
        copies.some((args) => args.split(/\s+/).includes(path)),
        path,
      ).toBe(true);
    }
  });

  it('runs as a non-root user with NODE_ENV=production and leaves the ops server on loopback', () => {
    const user = runtimeStage.filter((instruction) => instruction.keyword === 'USER').at(-1);
    expect(user?.args).toBeDefined();
    expect(user?.args).not.toMatch(/^(root|0)(:|$)/);
    const env = runtimeStage
      .filter((instruction) => instruction.keyword === 'ENV')
      .map((instruction) => instruction.args);
    expect(env).toContain('NODE_ENV=production');
    expect(env.join(' ')).not.toContain('NIGHTSHIFT_HTTP_HOST');
  });

  it('starts the nightshift bin with a real command by default', () => {
    expect(execForm('ENTRYPOINT')).toEqual(['node', 'bin/nightshift.js']);
    expect(existsSync(join(root, 'bin/nightshift.js'))).toBe(true);
    const cmd = execForm('CMD');
    expect(cliProblem(cmd), cmd.join(' ')).toBeUndefined();
    expect(cmd).toEqual(['start', '/config/policy.yaml']);
    // /config is where docker-compose.yml mounts ./config; the default policy is there.
    expect(existsSync(join(root, 'config/policy.yaml'))).toBe(true);
  });

  it('reports healthy when /healthz answers 200 on NIGHTSHIFT_HTTP_PORT, unhealthy otherwise', async () => {
    expect(healthcheckArgv().join(' ')).toContain('/healthz');
    expect(await healthcheckAgainst(200)).toBe(0);
    expect(await healthcheckAgainst(503)).not.toBe(0);
  });
});
