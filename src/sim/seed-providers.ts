import { CLUSTER_LOG_TYPES, type NodeGroupConfig } from '../api/index.js';
import type { Prng } from './random.js';
import type { Ago, IdMaker } from './seed-ids.js';
import type { SimAllowListEntry, SimCloudProvider } from './state.js';

export const REGIONS = {
  cloud_a: ['us-east-1', 'eu-west-1', 'ap-southeast-1'],
  cloud_b: ['eastus', 'westeurope'],
  cloud_c: ['us-central1', 'europe-west4'],
} as const;
export type Platform = keyof typeof REGIONS;
export const PLATFORMS = Object.keys(REGIONS) as Platform[];
const COMPONENT_VERSIONS: Record<string, string[]> = {
  engine: ['4.1.3', '4.2.0'],
  gateway: ['1.9.2', '1.10.0'],
  agent: ['2.4.0', '2.5.1'],
  autoscaler: ['1.2.0', '1.3.0'],
};
export function makeAllowList(rand: Prng, ids: IdMaker, withLoopback: boolean): SimAllowListEntry[] {
  const candidates = [
    () => ({ cidr: `203.0.113.${rand.int(1, 254)}/32`, note: 'office egress' }),
    () => ({ cidr: '198.51.100.0/24', note: 'corporate VPN' }),
    () => ({ cidr: `192.0.2.${rand.int(1, 254)}/32`, note: 'CI runners' }),
    () => ({ cidr: `10.${rand.int(0, 255)}.0.0/16`, note: 'peered VPC' }),
    () => ({ cidr: `2001:db8:${rand.hex(4)}::/48`, note: 'IPv6 office range' }),
  ];
  const entries = rand
    .shuffle(candidates)
    .slice(0, rand.int(2, 4))
    .map((make) => {
      const id = ids.next('al');
      const { cidr, note } = make();
      return { cidr, id, note };
    });
  if (withLoopback || rand.chance(0.4)) {
    entries.push({ cidr: '127.0.0.1/32', id: ids.next('al'), note: 'local tooling' });
  }
  return entries;
}

interface ProviderInput {
  rand: Prng;
  ids: IdMaker;
  ago: Ago;
  org_id: string;
  name: string;
  platform: Platform;
  region: string;
  creator: string;
}

export function makeCloudProvider({
  rand,
  ids,
  ago,
  org_id,
  name,
  platform,
  region,
  creator,
}: ProviderInput): SimCloudProvider {
  const id = ids.next('cp');
  const shortId = id.slice(3);
  const accountId = String(rand.int(100_000, 999_999)) + String(rand.int(100_000, 999_999));
  const versions = Object.fromEntries(
    Object.entries(COMPONENT_VERSIONS).map(([component, choices]) => [component, rand.pick(choices)]),
  );
  const logTypes = new Set(rand.shuffle(CLUSTER_LOG_TYPES).slice(0, rand.int(1, 3)));
  const zoneSuffixes =
    platform === 'cloud_b'
      ? ['-1', '-2', '-3']
      : platform === 'cloud_c'
        ? ['-a', '-b', '-c']
        : ['a', 'b', 'c'];
  const nodeGroup = (max: number) => ({
    max_size: rand.int(1, max),
    min_size: 0,
    overprovisioning_factor: rand.int(0, 2),
  });
  const nodeGroups: NodeGroupConfig = {
    ng_16: nodeGroup(8),
    ng_32: nodeGroup(6),
    ng_48: nodeGroup(4),
    ng_64: nodeGroup(2),
    ng_system: { max_size: 3, min_size: 1, overprovisioning_factor: 0 },
    prefetch_image_list: [`registry.example.net/svc/engine:${versions.engine}`],
  };
  const created = rand.int(90, 400);
  return {
    id,
    short_id: shortId,
    name: `${name}-byoc`,
    type: 'cross_account_role',
    status: 'Active',
    platform,
    region,
    org_id,
    created_at: ago(created),
    updated_at: ago(rand.int(1, created)),
    created_by: creator,
    api_tokens: [`tok_****${rand.hex(4)}`],
    availability_zones: zoneSuffixes.map((suffix) => `${region}${suffix}`),
    cluster_enabled_log_types: CLUSTER_LOG_TYPES.filter((type) => logTypes.has(type)),
    component_versions: JSON.stringify(versions),
    k8s_cluster_id: `k8s-${rand.hex(10)}`,
    endpoint_service_name: `svc-endpoint-${rand.hex(8)}.${region}.example.net`,
    last_error: '',
    node_group_config: nodeGroups,
    options: { account_id: accountId, secure_connection: rand.chance(0.5) },
    role_rn: `rn:${platform}:iam::${accountId}:role/svc-byoc-${shortId}`,
    role_external_id: `ext-${rand.hex(16)}`,
    security_group_id: `sg-${rand.hex(12)}`,
    subnet_id: [`subnet-${rand.hex(8)}`, `subnet-${rand.hex(8)}`],
    vpc_id: `vpc-${rand.hex(12)}`,
    vpc_owned_by_svc: rand.chance(0.5),
    version: rand.pick(['1.4.2', '1.5.0']),
    version_number: rand.int(1, 12),
    work_dir: `/var/lib/svc/byoc/${id}`,
  };
}
