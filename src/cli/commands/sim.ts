import type { Command } from 'commander';
import pino from 'pino';
import { createLogger } from '../../log/index.js';
import {
  DEFAULT_API_KEY,
  DEFAULT_BEARER_TOKEN,
  DEFAULT_FLEET,
  DEFAULT_TRANSITION_MS,
  type FaultConfigInput,
  FaultConfigSchema,
  formatFleet,
  loadStateFile,
  type OrgUsersShape,
  parseFleet,
  type SimulatorOptions,
  StateError,
  startSimulator,
} from '../../sim/index.js';
import { EXIT, UsageError } from '../exit.js';

interface SimFlags {
  host: string;
  port: string;
  apiKey: string;
  bearerToken: string;
  seed: string;
  fleet: string;
  state?: string;
  transitionMs: string;
  admin: boolean;
  latencyMs: string;
  jitterMs: string;
  errorRate: string;
  throttleRps?: string;
  dropRate: string;
  hangRate: string;
  faultSeed?: string;
  faultOperations?: string;
  orgUsersShape?: string;
  trustProxy: boolean;
  logLevel?: string;
}

const FAULT_FLAGS: Record<string, string> = {
  latencyMs: '--latency-ms',
  jitterMs: '--jitter-ms',
  errorRate: '--error-rate',
  throttleRps: '--throttle-rps',
  dropRate: '--drop-rate',
  hangRate: '--hang-rate',
  seed: '--fault-seed',
  operations: '--fault-operations',
};
const ORG_USERS_SHAPES: readonly OrgUsersShape[] = ['auto', 'array', 'object'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

export function registerSimCommand(program: Command): void {
  program
    .command('sim')
    .description('run the API simulator: a stateful HTTP fake of all 15 operations, with faults on demand')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', '0')
    .option('--api-key <key>', 'the x-api-key the operations require', DEFAULT_API_KEY)
    .option('--bearer-token <token>', 'the bearer token list org users requires', DEFAULT_BEARER_TOKEN)
    .option('--seed <n>', 'seed of the generated fleet (0-4294967295)', '1')
    .option('--fleet <WxS>', 'W workgroups × S workspaces to generate', formatFleet(DEFAULT_FLEET))
    .option('--state <file>', 'start from a state file (GET /_sim/state format) instead of a generated fleet')
    .option(
      '--transition-ms <ms>',
      'duration of pause, resume, restore and upgrade',
      String(DEFAULT_TRANSITION_MS),
    )
    .option('--no-admin', 'do not serve the /_sim/ admin API')
    .option('--latency-ms <ms>', 'fault: fixed delay before every answer', '0')
    .option('--jitter-ms <ms>', 'fault: extra random delay, 0 to this', '0')
    .option('--error-rate <fraction>', 'fault: share of requests answered 500 Internal-Error', '0')
    .option('--throttle-rps <n>', 'fault: requests per second let through; the rest get 429 Quota-Exceed')
    .option('--drop-rate <fraction>', 'fault: share of connections destroyed without an answer', '0')
    .option('--hang-rate <fraction>', 'fault: share of requests never answered', '0')
    .option('--fault-seed <n>', 'seed of the fault decisions (default: --seed)')
    .option('--fault-operations <names>', 'comma-separated operations the faults apply to (default: all)')
    .option('--org-users-shape <shape>', 'body of list org users: auto, array or object')
    .option('--trust-proxy', "take the caller's address from X-Forwarded-For", false)
    .option('--log-level <level>', 'log requests and transitions to stderr at this level')
    .addHelpText(
      'after',
      [
        '',
        'Prints one JSON line, {"url":"http://127.0.0.1:PORT"}, once it listens; stops on SIGINT or SIGTERM.',
        'Admin API under /_sim/ (state, requests, faults, reset): see docs/simulator.md.',
        '',
        'Examples:',
        '  nightshift sim --fleet 20x5 --port 8787',
        '  nightshift sim --transition-ms 500 --error-rate 0.1 --throttle-rps 20',
        '  nightshift sim --state fleet.json --no-admin --log-level info',
      ].join('\n'),
    )
    .action(async (flags: SimFlags, command: Command) => {
      const options = await parseSimFlags(flags, command);
      await runSimulator(options);
    });
}

/** Turns the flags into simulator options; every bad value is a UsageError naming its flag. */
async function parseSimFlags(flags: SimFlags, command: Command): Promise<SimulatorOptions> {
  if (flags.state !== undefined) {
    for (const flag of ['fleet', 'seed'] as const) {
      if (command.getOptionValueSource(flag) === 'cli') {
        throw new UsageError(`--state and --${flag} cannot be combined: the state file holds the fleet`);
      }
    }
  }
  const options: SimulatorOptions = {
    host: flags.host,
    port: integer('--port', flags.port, 0, 65_535),
    apiKey: nonEmpty('--api-key', flags.apiKey),
    bearerToken: nonEmpty('--bearer-token', flags.bearerToken),
    seed: integer('--seed', flags.seed, 0, 0xffff_ffff),
    fleet: fleetOf(flags.fleet),
    transitionMs: integer('--transition-ms', flags.transitionMs, 0, 3_600_000),
    admin: flags.admin,
    faults: faultsOf(flags),
    trustProxy: flags.trustProxy,
  };
  if (flags.orgUsersShape !== undefined) {
    const shape = ORG_USERS_SHAPES.find((candidate) => candidate === flags.orgUsersShape);
    if (!shape) {
      throw new UsageError(
        `--org-users-shape must be one of ${ORG_USERS_SHAPES.join(', ')}, got "${flags.orgUsersShape}"`,
      );
    }
    options.orgUsersShape = shape;
  }
  if (flags.logLevel !== undefined) {
    if (!LOG_LEVELS.includes(flags.logLevel)) {
      throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${flags.logLevel}"`);
    }
    options.logger = createLogger({
      level: flags.logLevel,
      base: { name: 'nightshift-sim' },
      destination: pino.destination(2),
    });
  }
  if (flags.state !== undefined) {
    try {
      options.state = await loadStateFile(flags.state);
    } catch (error) {
      if (error instanceof StateError) throw new UsageError(`--state: ${error.message}`);
      throw error;
    }
  }
  return options;
}

async function runSimulator(options: SimulatorOptions): Promise<void> {
  // Listen for signals before printing the URL: a supervisor may signal as soon as it reads it.
  let stopListening = () => {};
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    const stop = (signal: NodeJS.Signals) => resolve(signal);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopListening = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    };
  });
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  try {
    sim = await startSimulator(options);
  } catch (error) {
    stopListening();
    process.stderr.write(`nightshift: the simulator could not start: ${(error as Error).message}\n`);
    process.exitCode = EXIT.failed;
    return;
  }
  process.stdout.write(`${JSON.stringify({ url: sim.url })}\n`);
  const signal = await signalled;
  stopListening();
  options.logger?.info({ signal }, 'simulator stopping');
  await sim.close();
  process.exitCode = EXIT.ok;
}

function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < min || value > max) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

function nonEmpty(flag: string, text: string): string {
  if (text === '') throw new UsageError(`${flag} must not be empty`);
  return text;
}

function fleetOf(text: string) {
  try {
    return parseFleet(text);
  } catch (error) {
    throw new UsageError(`--fleet: ${(error as Error).message}`);
  }
}

function faultsOf(flags: SimFlags): FaultConfigInput {
  const number = (flag: string, text: string) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value))
      throw new UsageError(`${flag} must be a number, got "${text}"`);
    return value;
  };
  const input = {
    latencyMs: number('--latency-ms', flags.latencyMs),
    jitterMs: number('--jitter-ms', flags.jitterMs),
    errorRate: number('--error-rate', flags.errorRate),
    throttleRps: flags.throttleRps === undefined ? null : number('--throttle-rps', flags.throttleRps),
    dropRate: number('--drop-rate', flags.dropRate),
    hangRate: number('--hang-rate', flags.hangRate),
    seed: number('--fault-seed', flags.faultSeed ?? flags.seed),
    operations: flags.faultOperations
      ?.split(',')
      .map((name) => name.trim()) as FaultConfigInput['operations'],
  };
  const parsed = FaultConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = FAULT_FLAGS[String(issue?.path[0])] ?? 'fault flags';
    throw new UsageError(`${flag}: ${issue?.message ?? 'invalid value'}`);
  }
  return parsed.data;
}
