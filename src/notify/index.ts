export {
  findingKey,
  NOTIFIABLE_OUTCOMES,
  type NotifiableOutcome,
  type RunChange,
  runChange,
  type SinkState,
  SinkStateSchema,
} from './events.js';
export {
  formatNotification,
  formatPolicyNotice,
  jsonPayload,
  MAX_PAYLOAD_FINDINGS,
  MAX_PAYLOAD_PROBLEMS,
  MAX_PAYLOAD_TARGETS,
  type Notification,
  type PolicyNotice,
  type PolicyPayload,
  policyJsonPayload,
  policySlackPayload,
  type RunPayload,
  type SlackMessage,
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
