import { z } from 'zod';
import { OPERATION_NAMES, type OperationName } from './catalog.js';
import { Prng } from './random.js';

const rate = z.number().min(0).max(1);
const millis = z.number().int().min(0).max(600_000);

/**
 * Faults injected into the 15 operations (never into `/_sim/`). Every field defaults to
 * "off"; `PUT /_sim/faults` replaces the whole configuration.
 */
export const FaultConfigSchema = z.strictObject({
  /** Fixed delay added before every affected request is answered. */
  latencyMs: millis.default(0),
  /** Extra delay drawn uniformly from [0, jitterMs]. */
  jitterMs: millis.default(0),
  /** Fraction of requests answered 500 Internal-Error. */
  errorRate: rate.default(0),
  /** Requests per second allowed through (token bucket, burst = the rate); null: no limit. */
  throttleRps: z.number().positive().max(1_000_000).nullable().default(null),
  /** Fraction of requests whose connection is destroyed without an answer. */
  dropRate: rate.default(0),
  /** Fraction of requests never answered until the client gives up or the simulator closes. */
  hangRate: rate.default(0),
  /** Seed of the fault decisions: the same seed and request order give the same faults. */
  seed: z.number().int().min(0).max(0xffff_ffff).default(1),
  /** Operations the faults apply to; null: all 15. */
  operations: z.array(z.enum(OPERATION_NAMES)).nullable().default(null),
});
export type FaultConfig = z.infer<typeof FaultConfigSchema>;
export type FaultConfigInput = z.input<typeof FaultConfigSchema>;

/** Parses a configuration given in code; throws a RangeError naming the source and the field. */
export function parseFaultConfig(input: FaultConfigInput, source: string): FaultConfig {
  const parsed = FaultConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new RangeError(`${source}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
}

export type FaultOutcome = 'pass' | 'error' | 'throttle' | 'drop' | 'hang';

export interface FaultDecision {
  delayMs: number;
  outcome: FaultOutcome;
  /** Seconds to put in `Retry-After` when throttled. */
  retryAfterSeconds: number;
}

const PASS: FaultDecision = Object.freeze({ delayMs: 0, outcome: 'pass', retryAfterSeconds: 0 });

/**
 * Decides, request by request, which fault to inject. Each affected request draws the same
 * number of random values whatever is enabled, so a given seed always yields the same
 * sequence; the throttle alone depends on time, through the `nowMs` the caller passes.
 */
export class FaultInjector {
  #config!: FaultConfig;
  #rand!: Prng;
  #active = false;
  #scope: ReadonlySet<OperationName> | null = null;
  #tokens = 0;
  #refilledAt: number | null = null;

  constructor(config: FaultConfig) {
    this.configure(config);
  }

  get config(): FaultConfig {
    return this.#config;
  }

  /** Replaces the configuration and restarts the random sequence and the throttle's bucket. */
  configure(config: FaultConfig): void {
    this.#config = config;
    this.#rand = new Prng(config.seed);
    this.#scope = config.operations ? new Set(config.operations) : null;
    this.#tokens = config.throttleRps === null ? 0 : Math.max(1, config.throttleRps);
    this.#refilledAt = null;
    this.#active =
      config.latencyMs > 0 ||
      config.jitterMs > 0 ||
      config.errorRate > 0 ||
      config.throttleRps !== null ||
      config.dropRate > 0 ||
      config.hangRate > 0;
  }

  decide(operation: OperationName, nowMs: number): FaultDecision {
    if (!this.#active || (this.#scope !== null && !this.#scope.has(operation))) return PASS;
    const { latencyMs, jitterMs, dropRate, hangRate, errorRate } = this.#config;
    const jitterDraw = this.#rand.next();
    const dropDraw = this.#rand.next();
    const hangDraw = this.#rand.next();
    const errorDraw = this.#rand.next();
    const delayMs = latencyMs + Math.floor(jitterDraw * (jitterMs + 1));
    if (dropDraw < dropRate) return { delayMs, outcome: 'drop', retryAfterSeconds: 0 };
    if (hangDraw < hangRate) return { delayMs, outcome: 'hang', retryAfterSeconds: 0 };
    const retryAfterSeconds = this.#throttle(nowMs);
    if (retryAfterSeconds > 0) return { delayMs, outcome: 'throttle', retryAfterSeconds };
    if (errorDraw < errorRate) return { delayMs, outcome: 'error', retryAfterSeconds: 0 };
    return delayMs === 0 ? PASS : { delayMs, outcome: 'pass', retryAfterSeconds: 0 };
  }

  /** Takes a token if one is left; otherwise the whole seconds until the next one. */
  #throttle(nowMs: number): number {
    const rps = this.#config.throttleRps;
    if (rps === null) return 0;
    const capacity = Math.max(1, rps);
    if (this.#refilledAt !== null) {
      this.#tokens = Math.min(capacity, this.#tokens + ((nowMs - this.#refilledAt) / 1000) * rps);
    }
    this.#refilledAt = nowMs;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / rps));
  }
}
