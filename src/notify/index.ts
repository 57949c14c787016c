export {
  findingKey,
  NOTIFIABLE_OUTCOMES,
  type NotifiableOutcome,
  type RunChange,
  runChange,
  type SinkState,
  SinkStateSchema,
  windowEvidence,
} from './events.js';
export {
  actedText,
  formatNotification,
  jsonPayload,
  MAX_PAYLOAD_FINDINGS,
  MAX_PAYLOAD_TARGETS,
  type Notification,
  type RunPayload,
  runLink,
  slackPayload,
} from './format.js';
export {
  InMemoryNotificationMemory,
  type NotificationMemory,
  RedisNotificationMemory,
  type RedisNotificationMemoryOptions,
} from './memory.js';
export { type NotificationSinks, Notifier, type NotifierOptions, type SinkReport } from './notifier.js';
export {
  OVERDUE_CHECK_MS,
  type OverdueEpisode,
  OverdueEpisodeSchema,
  type OverdueEpisodeStore,
  type OverdueNotice,
  OverdueWatch,
  type OverdueWatchOptions,
  overdueOf,
} from './overdue.js';
export {
  formatOverdueNotice,
  jobRunsLink,
  type OverduePayload,
  overdueJsonPayload,
  overdueSlackPayload,
} from './overdue-format.js';
export {
  formatPolicyNotice,
  MAX_PAYLOAD_PROBLEMS,
  type PolicyNotice,
  type PolicyPayload,
  policyJsonPayload,
  policySlackPayload,
} from './policy-format.js';
export type { SlackMessage } from './slack.js';
export {
  type Delivery,
  type PostWebhookOptions,
  postWebhook,
  scrubUrl,
  WEBHOOK_DEFAULTS,
  WebhookError,
  type WebhookErrorCode,
  type WebhookRetryOptions,
  type WebhookSink,
} from './webhook.js';
