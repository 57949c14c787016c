import type { ChaosDrillReport, KillRecord } from './chaos-drill.js';

const seconds = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);

/** The report as Markdown tables: the goals, the figures, every kill and restart. */
export function formatReport(report: ChaosDrillReport): string {
  const o = report.options;
  const f = o.faults;
  const lines: string[] = [];
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  lines.push(
    `Chaos drill, ${report.startedAt}: fleet ${o.fleet} (${report.desiredState.total} workspaces), ${o.workers} workers, ${o.schedulers} schedulers, ` +
      `ticks every ${o.tickSeconds} s, chaos ${o.chaosMs / 1000} s, seed ${o.seed}; ` +
      `faults during the chaos: ${((f.errorRate ?? 0) * 100).toFixed(0)} % 500s, ${((f.hangRate ?? 0) * 100).toFixed(0)} % hangs, throttle ${f.throttleRps ?? 'off'} req/s; ` +
      `lock ${o.lockMs} ms, up to ${o.maxStalls} stalls a run, API timeout ${o.apiTimeoutMs} ms, parts of ${o.partSize}, overlap ${o.overlap}. ` +
      `Took ${seconds(report.durationMs)}; load average ${load(report.loadAverage.start)} at the start, ${load(report.loadAverage.end)} at the end.`,
  );
  lines.push('', '| goal | result | figure |', '|---|---|---|');
  for (const goal of report.goals)
    lines.push(`| ${goal.name} | ${goal.ok ? 'ok' : '**FAILED**'} | ${goal.detail.replace(/\|/g, '\\|')} |`);
  const t = report.ticks;
  const a = report.api;
  lines.push(
    '',
    '| figure | value |',
    '|---|---|',
    `| runs expected / executed | ${t.expected} / ${t.executed} (${t.firstTick} to ${t.lastTick}) |`,
    `| run outcomes | ${Object.entries(t.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}${t.catchUps ? `; ${t.catchUps} catch-up` : ''} |`,
    `| lost / duplicated | ${t.lost.length} / ${t.duplicated.length} |`,
    `| target records | ${report.targets.records}: ${report.targets.succeeded} succeeded, ${report.targets.skipped} skipped (${Object.entries(
      report.targets.skipReasons,
    )
      .sort((x, y) => y[1] - x[1])
      .map(([reason, n]) => `${reason} ${n}`)
      .join(
        ', ',
      )}), ${report.targets.failed} failed (${report.targets.reversed} paused again by the other job while the resume waited) |`,
    `| pause and resume runs executing at once | ${report.targets.overlappingRuns} |`,
    `| run pairs of one job started out of tick order | ${report.targets.outOfTickOrder} |`,
    `| desired state at the end | ${report.desiredState.percent} % ${report.desiredState.expected} (${report.desiredState.inState} / ${report.desiredState.total}) after the last ${t.lastAction} |`,
    `| retries spent | ${report.retries.targetRetries + report.retries.redeliveries}: ${report.retries.targetRetries} target retries + ${report.retries.redeliveries} redeliveries (${report.retries.runsRedelivered} runs) |`,
    `| API calls | ${a.calls}: ${a.injected.error} answered 500, ${a.injected.hang} hung, ${a.injected.throttle} throttled (429) |`,
    `| accepted pauses / resumes | ${a.pauses} / ${a.resumes}; ${a.refusedAsAlreadyDone} refused as already done, ${a.doubleMutations} double |`,
    `| worker kills | ${report.kills.length} (${report.kills.filter((k) => k.runs.length > 0).length} mid-run); recovery ${recoverySpread(report.kills)} |`,
  );
  if (report.bullFailed.length) lines.push(`| failed in BullMQ | ${report.bullFailed.join('; ')} |`);
  const errors = Object.entries(report.errorLines);
  if (errors.length) lines.push(`| error lines | ${errors.map(([m, n]) => `${m} ×${n}`).join('; ')} |`);
  lines.push(
    '',
    '| at | event | runs affected | recovered after | replacement ready after |',
    '|---|---|---|---|---|',
  );
  const rows = [
    ...report.kills.map((k) => ({
      at: k.atMs,
      row: `| ${seconds(k.atMs)} | SIGKILL ${k.instance} | ${k.runs.join(', ') || 'none (idle)'} | ${k.runs.length ? seconds(k.recoveryMs) + (k.unrecovered.length ? ` (never: ${k.unrecovered.join(', ')})` : '') : 'idle'} | ${seconds(k.replacementReadyMs)} |`,
    })),
    ...report.restarts.map((r) => ({
      at: r.atMs,
      row:
        r.what === 'redis'
          ? `| ${seconds(r.atMs)} | Redis stopped and started again (appendonly) | ${r.detail || 'none'} | listening again after ${seconds(r.downMs)}${r.reconnectedMs === undefined ? '' : `; every client that noticed back after ${seconds(r.reconnectedMs)}`} | — |`
          : `| ${seconds(r.atMs)} | SIGKILL ${r.detail} | — | — | ${seconds(r.downMs)} |`,
    })),
  ].sort((x, y) => x.at - y.at);
  lines.push(...rows.map((r) => r.row));
  lines.push('', `Times are from the first tick. Process logs: ${report.logDir}`);
  return lines.join('\n');
}

function recoverySpread(kills: readonly KillRecord[]): string {
  const times = kills
    .flatMap((k) => (k.recoveryMs === undefined ? [] : [k.recoveryMs]))
    .sort((a, b) => a - b);
  if (times.length === 0) return '—';
  return `min ${seconds(times[0])}, median ${seconds(times[Math.floor(times.length / 2)])}, max ${seconds(times.at(-1))}`;
}
