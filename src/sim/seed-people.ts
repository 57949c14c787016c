import type { Prng } from './random.js';
import type { Ago, IdMaker } from './seed-ids.js';
import type { SimOrgUser, SimWorkgroup } from './state.js';

const FIRST_NAMES = [
  'Ada',
  'Grace',
  'Linus',
  'Margaret',
  'Ken',
  'Barbara',
  'Dennis',
  'Frances',
  'Edsger',
  'Radia',
];
const LAST_NAMES = [
  'Lovelace',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Thompson',
  'Liskov',
  'Ritchie',
  'Allen',
  'Perlman',
];
const ORG_ROLES = [
  { name: 'org-admin', displayName: 'Organization Admin' },
  { name: 'workgroup-admin', displayName: 'Workgroup Admin' },
  { name: 'workspace-operator', displayName: 'Workspace Operator' },
  { name: 'viewer', displayName: 'Viewer' },
];
export interface Person {
  firstName: string;
  lastName: string;
  email: string;
}

export function makePeople(rand: Prng, count: number): Person[] {
  const people: Person[] = [];
  const used = new Set<string>();
  while (people.length < count) {
    const firstName = rand.pick(FIRST_NAMES);
    const lastName = rand.pick(LAST_NAMES);
    const email = `${firstName}.${lastName}@example.com`.toLowerCase();
    if (used.has(email)) continue;
    used.add(email);
    people.push({ firstName, lastName, email });
  }
  return people;
}

export function makeOrgUsers(
  rand: Prng,
  ids: IdMaker,
  ago: Ago,
  orgId: string,
  people: Person[],
  workgroups: SimWorkgroup[],
): SimOrgUser[] {
  const roles = ORG_ROLES.map((role) => ({
    ...role,
    id: ids.next('role'),
    path: `/roles/${role.name}`,
    tenantID: orgId,
    trn: `trn:svc:${orgId}:role/${role.name}`,
  }));
  const workgroupIds = workgroups.map((wg) => wg.workgroup_id);
  return people.map((person, i) => {
    const id = ids.next('usr', 8);
    const role = i === 0 ? roles[0] : rand.pick(roles.slice(1));
    const attachedTo = i === 0 ? workgroupIds : rand.shuffle(workgroupIds).slice(0, rand.int(1, 2));
    // About one user in four has not signed in for months: material for stale-user policies.
    const lastLoginDays = rand.chance(0.25) ? rand.int(90, 400) : rand.int(1, 72) / 24;
    const created = rand.int(400, 900);
    return {
      id,
      idpUserID: ids.next('idp', 12),
      authID: `authn|${rand.hex(24)}`,
      created: ago(created),
      updated: ago(rand.int(1, created)),
      email: person.email,
      enabled: i === 0 || rand.chance(0.9),
      firstName: person.firstName,
      lastName: person.lastName,
      metadata: { attachedTo, lastLogin: ago(lastLoginDays) },
      path: `/orgs/${orgId}/users/${id}`,
      roles: role ? [role] : [],
      tenantID: orgId,
      trn: `trn:svc:${orgId}:user/${id}`,
      username: person.email,
    };
  });
}
