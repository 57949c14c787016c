import type {
  Cancellation,
  Hold,
  RunCounts,
  RunOutcome,
  RunSummary,
  RunTrigger,
} from '../../engine/index.js';
import type { AuditEntry, OpenFinding } from '../../store/index.js';

/**
 * What the console's JSON endpoints answer, and what its pages are rendered from: one shape per
 * view, so a script reading `/api/…` sees exactly what the page shows.
 */

/** A run as a list shows it: no targets, no findings. */
export interface RunBrief {
  runId: string;
  job: string;
  action: string;
  trigger: RunTrigger;
  dryRun: boolean;
  outcome: RunOutcome;
  scheduledAt?: string | undefined;
  startedAt?: string | undefined;
  finishedAt?: string | undefined;
  durationMs?: number | undefined;
  counts: RunCounts;
  findings: number;
  reason?: string | undefined;
  deliveries?: number | undefined;
  takenOverFrom?: string | undefined;
}

/** An edit of the policy file a scheduler refused; the policy before it stays in force. */
export interface RejectedEditView {
  sha: string;
  at: string;
  host: string;
  /** Each problem as `file:line:col: message`. */
  problems: string[];
  /** Why a valid text could not be loaded, when the fault was not the text's. */
  error?: string | undefined;
}

/** The policy the schedulers run. */
export interface PolicyInForceView {
  sha: string;
  loadedAt: string;
  host: string;
  /** The last edit refused since this policy was loaded; null when none was. */
  rejected: RejectedEditView | null;
}

/** A firing: UTC (ISO) and the job's own zone. */
export interface FiringView {
  at: string;
  local: string;
  timezone: string;
  /** For a window: whether its uptime starts (workspaces resumed) or ends (paused) then. */
  edge?: 'uptime starts' | 'uptime ends' | undefined;
}

export interface ScheduleEntry {
  name: string;
  kind: 'job' | 'window';
  action: string;
  /** The selector in words (`workgroups dev-* / workspaces * except dev-a/keep`), or what else it acts on. */
  target: string;
  /** The cron (or interval) in words; for a window its uptime and reconcile interval. */
  schedule: string;
  timezone: string;
  dryRun: boolean;
  /** Null when suspended, or nothing fires again. */
  next: FiringView | null;
  /** Null when not suspended; else by whom (`policy`: `suspend: true` in the file) and why. */
  suspended: { by: 'policy' | 'command'; detail: string } | null;
  /**
   * The `skip:` calendars (a job does not fire on their dates; a window has no uptime on them), in
   * the job's zone: whether today is one of their dates, and the next ones; null when none.
   */
  skip: { calendars: string[]; today: string | null; upcoming: string[] } | null;
  lastRun: RunBrief | null;
}

/** Window reconciliations in a row that changed nothing (see `isQuiet`), folded into one entry. */
export interface QuietRunsView {
  kind: 'quiet';
  count: number;
  /** How many of them each window made. */
  jobs: { job: string; count: number }[];
  /** How many reported drift they left alone. */
  drifting: number;
  /** When the oldest and the newest of them finished. */
  from: string;
  to: string;
  latest: RunBrief;
}

/** A row of the newest runs: a run that did something, or quiet reconciliations folded. */
export type RecentEntry = { kind: 'run'; run: RunBrief } | QuietRunsView;

/** `/api/schedules`. */
export interface SchedulesView {
  generatedAt: string;
  /** Null when no scheduler has recorded a policy in this Redis (prefix). */
  policy: PolicyInForceView | null;
  /** Why `entries` is empty: no policy recorded, or it expired or cannot be read here. */
  problem: string | null;
  entries: ScheduleEntry[];
  /** The newest runs of every job, quiet window reconciliations folded. */
  recent: RecentEntry[];
}

/** `/api/runs?job=&limit=`: one job's runs (or every job's), newest first, none folded. */
export interface RunsView {
  generatedAt: string;
  job: string | null;
  limit: number;
  /** The runs the queue holds now (of `job` only, when given): running first, then queued. */
  underWay: InProgressRunView[];
  runs: RunBrief[];
}

/** `/api/runs/:id`: the run's summary as the history keeps it. */
export type RunDetailView = RunSummary;

export interface FleetWorkspaceView {
  id: string;
  name: string;
  /** The status the listing showed (`Active`, `Stopped`, `Stopping`, …); `unknown` when it had none. */
  state: string;
  /** Whose pause nightshift owns (ledger), since when. */
  owner: { kind: 'job' | 'window'; name: string; since: string; state: 'intent' | 'confirmed' } | null;
  /**
   * The hold in force on it, and what acts on it here: only a window brings a workspace to the held
   * state, so a hold on one no window covers, in the other state, does nothing (`inEffect: false`).
   */
  hold: {
    pattern: string;
    state: string;
    until: string;
    by: string;
    reason: string;
    /** Null when the policy in force cannot be read (which windows there are is unknown). */
    inEffect: boolean | null;
    effect: string;
  } | null;
  /** The window covering it, what it wants now and whether the workspace differs. */
  window: { name: string; desired: 'Active' | 'Stopped' | null; drift: boolean; why: string } | null;
}

export interface FleetWorkgroupView {
  id: string;
  name: string;
  workspaces: FleetWorkspaceView[];
}

/** `/api/fleet`. */
export interface FleetView {
  generatedAt: string;
  /** The listing shown: the last one a run made; null when no run has listed the fleet yet. */
  listing: { at: string; ageMs: number; runId: string; job: string } | null;
  /** The filters applied (`?workgroup=`, `?state=`); counts are of the whole fleet. */
  filters: { workgroup: string | null; state: string | null };
  counts: {
    workspaces: number;
    byState: Record<string, number>;
    owned: number;
    /** Workspaces a hold keeps (or may keep) in its state; `heldIdle` are under holds nothing acts on. */
    held: number;
    heldIdle: number;
    drifting: number;
  };
  /** Every workgroup name and state of the listing, for the filters. */
  workgroupNames: string[];
  states: string[];
  workgroups: FleetWorkgroupView[];
}

/** A line of a workspace's timeline, newest first on the page. */
export type TimelineEvent =
  /** A run paused, resumed or otherwise acted on it (or failed to). */
  | {
      kind: 'run';
      at: string;
      job: string;
      action: string;
      runId: string;
      outcome: 'succeeded' | 'failed';
      reason: string | null;
      error: string | null;
      requestIds: string[];
    }
  /** A pause nightshift owns now (`until` null), or one that ended, and how (`endedBy`). */
  | {
      kind: 'pause';
      at: string;
      owner: string;
      ownerKind: 'job' | 'window';
      /** The run that paused it; not kept once a pause has ended. */
      runId: string | null;
      state: 'intent' | 'confirmed';
      until: string | null;
      endedBy: 'resumed' | 'seen-active' | 'not-paused' | 'refused' | null;
      requestId: string | null;
    }
  /** A hold whose pattern covers it was placed, released or ran out. */
  | {
      kind: 'hold';
      at: string;
      event: 'held' | 'released' | 'expired';
      pattern: string;
      state: string;
      until: string;
      by: string;
      reason: string;
    };

/** `/api/fleet/<workgroupId>/<workspaceId>`: one workspace now, and what happened to it. */
export interface WorkspaceTimelineView {
  generatedAt: string;
  workgroupId: string;
  workspaceId: string;
  /** As the fleet page shows it, from the last listing; null when that listing does not have it. */
  now: (FleetWorkspaceView & { workgroupName: string }) | null;
  listing: FleetView['listing'];
  /**
   * The last pause nightshift sent for it, kept until nightshift resumes it or sees it running;
   * with no owner and the workspace stopped, it is stranded (`nightshift adopt`).
   */
  journal: { owner: string; ownerKind: 'job' | 'window'; runId: string; at: string } | null;
  stranded: boolean;
  events: TimelineEvent[];
  /** How far back each source reaches: every read is bounded. */
  scope: { runsKept: number; closedPausesScanned: number; holdEventsScanned: number };
}

export interface SavingsAmount {
  pausedHours: number;
  /** In `currency`; null when no pause was priced. */
  estimatedCost: number | null;
}

/** `/api/savings`: every table's rows add up to `total` exactly (a day's workgroups to the day). */
export interface SavingsView {
  generatedAt: string;
  /** Midnight UTC `days - 1` days ago, and now: the span `nightshift savings --since <since>` reports. */
  since: string;
  until: string;
  currency: string | null;
  total: SavingsAmount;
  /** One per UTC day, oldest first, every day of the span (zero when nothing was paused). */
  days: (SavingsAmount & { date: string; byWorkgroup: Record<string, SavingsAmount> })[];
  /** Per workgroup over the span, most hours first. */
  workgroups: (SavingsAmount & { workgroup: string })[];
  /** Per window or job whose pauses they were, most hours first. */
  owners: (SavingsAmount & { owner: string; kind: 'job' | 'window' })[];
}

/** A finding of an audit that its job's latest successful run still reports, with when it first appeared. */
export type OpenFindingView = OpenFinding;

/** `/api/findings`. */
export interface FindingsView {
  generatedAt: string;
  findings: OpenFindingView[];
}

/** `/api/runs/:id` of a run the history has no summary of yet: its queue entry, and a cancel asked for. */
export interface InProgressRunView {
  runId: string;
  job: string;
  /** `queued` (waiting or delayed), `running`, or `finishing` (its delivery ended, its summary not yet written). */
  state: 'queued' | 'running' | 'finishing';
  cancellation: Cancellation | null;
}

/** A hold in force, and how many workspaces of the last listing it matches (null when there is none). */
export interface HoldRowView {
  hold: Hold;
  matches: number | null;
}

/** `/api/holds`: the holds in force, newest first. */
export interface HoldsView {
  generatedAt: string;
  holds: HoldRowView[];
}

/** `/api/holds/preview`: what a hold would reach before it is placed. */
export interface HoldPreviewView {
  generatedAt: string;
  /** The form as asked, for the place form to carry on. */
  form: { pattern: string; state: string; for: string; until: string; reason: string };
  /** What is wrong with the form; null when the hold can be placed. */
  problem: string | null;
  /** Where the fleet was read from (`run … at …`), or why it is unknown. */
  listing: string;
  /** The workspaces the pattern matches; null when no listing is kept. */
  matches: { workspace: string; status: string | null; nothingActs: boolean | null }[] | null;
  /** Why whether anything acts on them is unknown; null when the policy in force was read. */
  policyProblem: string | null;
}

/** `/api/audit`: the changes people made, newest first. */
export interface AuditView {
  generatedAt: string;
  /** The `since` filter as asked (a duration back, or an instant); null: the newest entries. */
  since: string | null;
  limit: number;
  entries: AuditEntry[];
}
