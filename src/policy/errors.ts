import { NightshiftError } from '../errors/index.js';

/** A place in a policy file. Line and column are 1-based. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

/**
 * How bad a problem is. An error makes the policy unusable; a warning names something that is
 * probably a mistake (a schedule that fires every minute of an hour) but leaves the policy valid.
 */
export type Severity = 'error' | 'warning';

/** One thing wrong with a policy file, at the YAML node that is wrong. */
export interface PolicyProblem extends SourceLocation {
  readonly message: string;
  /** Absent means error. */
  readonly severity?: Severity;
}

export function isWarning(problem: PolicyProblem): boolean {
  return problem.severity === 'warning';
}

/** `file:line:col: message` (`file:line:col: warning: message`), the form editors and CI annotations understand. */
export function formatProblem(problem: PolicyProblem): string {
  const label = isWarning(problem) ? 'warning: ' : '';
  return `${problem.file}:${problem.line}:${problem.col}: ${label}${problem.message}`;
}

/** Problems in file order, so the output reads top to bottom. */
export function sortProblems(problems: readonly PolicyProblem[]): PolicyProblem[] {
  return [...problems].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col);
}

/**
 * A policy file that cannot be used. It carries every problem found, not only the first, so one
 * run of `nightshift validate` shows everything to fix. Callers that run jobs treat it as
 * permanent: retrying cannot fix a policy.
 */
export class PolicyError extends NightshiftError {
  override name = 'PolicyError';
  readonly code = 'NS_POLICY_INVALID';
  /** The errors, in file order. */
  readonly problems: readonly PolicyProblem[];
  /** The warnings found beside them, in file order; they alone would not have refused the file. */
  readonly warnings: readonly PolicyProblem[];

  /** `problems` may hold warnings too: they are kept apart, in `warnings`. */
  constructor(problems: readonly PolicyProblem[]) {
    const sorted = sortProblems(problems);
    const errors = sorted.filter((problem) => !isWarning(problem));
    const count = errors.length === 1 ? '1 problem' : `${errors.length} problems`;
    super(`invalid policy (${count}):\n${errors.map(formatProblem).join('\n')}`);
    this.problems = errors;
    this.warnings = sorted.filter(isWarning);
  }
}
