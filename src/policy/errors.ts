/** A place in a policy file. Line and column are 1-based. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

/** One thing wrong with a policy file, at the YAML node that is wrong. */
export interface PolicyProblem extends SourceLocation {
  readonly message: string;
}

/** `file:line:col: message`, the form editors and CI annotations understand. */
export function formatProblem(problem: PolicyProblem): string {
  return `${problem.file}:${problem.line}:${problem.col}: ${problem.message}`;
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
export class PolicyError extends Error {
  override name = 'PolicyError';
  readonly code = 'POLICY_INVALID';
  readonly problems: readonly PolicyProblem[];

  constructor(problems: readonly PolicyProblem[]) {
    const sorted = sortProblems(problems);
    const count = sorted.length === 1 ? '1 problem' : `${sorted.length} problems`;
    super(`invalid policy (${count}):\n${sorted.map(formatProblem).join('\n')}`);
    this.problems = sorted;
  }
}
