// biome-ignore-all lint/suspicious/noTemplateCurlyInString: corruptions write the policy's own ${VAR} syntax
/**
 * The chaos drill's bad-input round: corrupted policy files and fuzzed API responses.
 *
 * - Policies: each case takes one of config/policy.yaml and config/examples/*.yaml and applies
 *   one to three corruptions drawn from a seeded RNG (byte flips, deleted, duplicated or swapped
 *   lines, wrong indentation, truncation, random Unicode, swapped keys and values, odd values,
 *   odd YAML lines, deep nesting, alias bombs). `parsePolicy` must either accept the result (a
 *   harmless corruption) or throw a PolicyError whose every problem names the file, a line
 *   within it and a column within that line, with a message, and never a secret's value.
 *   Anything else is a failure, reported with the seed and case number that reproduce it
 *   (`corruptPolicy(seed, index)`).
 * - Responses: each case is one call of one of the 15 operations through the real ApiClient,
 *   against a local HTTP server answering with a fuzzed response: a real simulator answer of that
 *   operation mutated (fields dropped, retyped, nested, echoing the API key), random JSON, an
 *   envelope-like object, text that is not JSON, an empty body, odd statuses and headers, or
 *   broken HTTP (connection destroyed, wrong Content-Length, broken chunks, a garbled status
 *   line). The call must resolve or reject with an ApiError that has a boolean `retryable`,
 *   names the operation and carries neither credential; anything else is a failure, printed
 *   with the case (`fuzzResponse(seed, index, seeds)` rebuilds it).
 *
 * Used by test/chaos/bad-input.test.ts (smaller counts) and bench/chaos-drill.ts.
 */
import { type PolicyRoundReport, runPolicyRound } from './bad-input-policies.js';
import { type ResponseRoundReport, runResponseRound } from './bad-input-responses.js';

export { fuzzResponse } from './bad-input-fuzz.js';
export { checkPolicy, corruptPolicy, runPolicyRound } from './bad-input-policies.js';
export { recordSeeds, runResponseRound } from './bad-input-responses.js';

export interface BadInputReport {
  policies: PolicyRoundReport;
  responses: ResponseRoundReport;
  ok: boolean;
  /** Markdown: a table of both rounds and every failure with what reproduces it. */
  text: string;
}

export async function runBadInputRound({
  policies = 1_000,
  responses = 10_000,
  seed = 1,
}: {
  policies?: number;
  responses?: number;
  seed?: number;
} = {}): Promise<BadInputReport> {
  const policyReport = runPolicyRound(policies, seed);
  const responseReport = await runResponseRound(responses, seed);
  const lines = [
    `Bad-input round, seed ${seed}:`,
    '',
    '| input | cases | outcome | failures | time |',
    '|---|---|---|---|---|',
    `| corrupted policy files | ${policyReport.total} | ${policyReport.rejected} rejected with ${policyReport.problems} located problems, ${policyReport.parsed} still valid | ${policyReport.failures.length} | ${(policyReport.durationMs / 1000).toFixed(1)} s (slowest case ${policyReport.slowest.ms.toFixed(0)} ms, #${policyReport.slowest.index}) |`,
    `| fuzzed API responses | ${responseReport.total} | ${responseReport.resolved} parsed, ${responseReport.apiErrors} ApiError (${Object.entries(
      responseReport.types,
    )
      .sort((a, b) => b[1] - a[1])
      .map(([type, n]) => `${type || '(no type)'} ${n}`)
      .join(
        ', ',
      )}) | ${responseReport.failures.length} | ${(responseReport.durationMs / 1000).toFixed(1)} s |`,
  ];
  for (const failure of policyReport.failures.slice(0, 20))
    lines.push(
      `- policy case ${failure.index} (seed ${seed}, ${failure.source}; ${failure.mutations.join('; ')}): ${failure.why}`,
    );
  for (const failure of responseReport.failures.slice(0, 20))
    lines.push(
      `- response case ${failure.index} (seed ${seed}, ${failure.operation}, ${failure.transport} ${failure.status}, ${failure.what}): ${failure.why}; body ${JSON.stringify(failure.body)}`,
    );
  return {
    policies: policyReport,
    responses: responseReport,
    ok: policyReport.failures.length === 0 && responseReport.failures.length === 0,
    text: lines.join('\n'),
  };
}
