export {
  type ActionCatalog,
  type ActionCatalogEntry,
  type ActionScope,
  createActionCatalog,
  type LongestWait,
} from './action-catalog.js';
export { formatDuration, parseDuration } from './duration.js';
export * from './errors.js';
export { MAX_POLICY_BYTES } from './file.js';
export { globSyntaxProblem, negates } from './glob-syntax.js';
export { interpolate, type PolicyEnv } from './interpolate.js';
export { BUILTIN_DEFAULTS, type EffectiveSettings } from './job-settings.js';
export { POLICY_SCHEMA_PATH, policyJsonSchema } from './json-schema.js';
export {
  type CheckPolicyOptions,
  checkPolicy,
  checkPolicyFile,
  type JobTarget,
  jobProblem,
  type LoadPolicyOptions,
  loadPolicyFile,
  type Policy,
  type PolicyCheck,
  type PolicyJob,
  type PolicyVariables,
  parsePolicy,
} from './load.js';
export {
  type JobParameters,
  PARAMETER_NAME,
  type RunParameters,
  RunParametersSchema,
} from './parameters.js';
export type { ValuePath } from './paths.js';
export { type Pricing, PricingSchema } from './pricing.js';
export {
  type CronCheck,
  checkCron,
  describeInstant,
  type Firing,
  type NextFiringsOptions,
  nextFiring,
  nextFirings,
  type Schedule,
  type ScheduleKind,
} from './schedule.js';
export {
  type Approval,
  DEFAULT_NOTIFY_EVENTS,
  DurationSchema,
  type JobDocument,
  type MaxTargets,
  NOTIFY_EVENTS,
  NOTIFY_FORMATS,
  type NotificationSink,
  type NotifyEvent,
  type NotifyFormat,
  type OverlapPolicy,
  type PolicyDocument,
  PolicySchema,
  type Settings,
  type StopAfter,
  SUPPORTED_VERSION,
  type TargetSelector,
  TargetSelectorSchema,
  WINDOW_RESUME_MODES,
  type WindowResumeMode,
} from './schema.js';
export {
  type HideSecrets,
  hideSecrets,
  MIN_EMBEDDED_LENGTH,
  type PolicySecret,
  SECRET_NAME,
} from './secrets.js';
export { didYouMean } from './suggest.js';
export { formatLocal, formatUtc, isTimeZone } from './timezone.js';
export { currentPeriod } from './uptime.js';
export { checkWindowOverlaps } from './window-overlap.js';
export {
  nextRunOf,
  nextWindowEdges,
  nextWindowFiring,
  type PolicyWindow,
  WINDOW_ACTION,
} from './windows.js';
export { yaml } from './yaml/package.js';
