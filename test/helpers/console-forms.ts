import type { SimulatorHandle } from '../../src/sim/index.js';

/** A form POST to the console as a browser on the same site sends it, without following the redirect. */
export function postForm(
  url: string,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
      ...headers,
    },
    body: new URLSearchParams(fields),
  });
}

/** The seeded fleet's drill workspace (ops/drill), and a backup of it whose counts differ from the workspace's own. */
export function drillAndBackup(sim: SimulatorHandle) {
  const ops = sim.state.workgroups.find((wg) => wg.name === 'ops');
  const drill = sim.state.workspaces.find(
    (ws) => ws.workgroup_id === ops?.workgroup_id && ws.name === 'drill',
  );
  const backup = sim.state.backups.find(
    (bk) => bk.workspace_id === drill?.workspace_id && bk.vertex_count !== drill?.vertex_count,
  );
  if (!drill || !backup) throw new Error('the seeded fleet has no ops/drill with a backup to restore');
  return { drill, backup };
}
