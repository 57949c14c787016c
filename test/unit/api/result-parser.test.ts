import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AllowListEntrySchema,
  CloudProviderSchema,
  CurrentIpSchema,
  DbUserSchema,
  OrgUserSchema,
  WorkgroupSchema,
} from '../../../src/api/index.js';
import { createResultParser } from '../../../src/api/result-parser.js';

const fieldValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

/** Objects that use the schema's own keys (and some strangers), each with a value of any JSON type. */
function objectsShapedLike(keys: string[]) {
  return fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 })), fieldValue, {
    maxKeys: 12,
  });
}

const workspaceKeys = [
  'workspace_id',
  'status',
  'vertex_count',
  'enable_ha',
  'addons',
  'workspace_type',
  'folder_statistics',
];
const workgroupLike = fc.record(
  {
    workgroup_id: fieldValue,
    name: fieldValue,
    enable_allow_list: fieldValue,
    workspaces: fc.oneof(fc.array(objectsShapedLike(workspaceKeys), { maxLength: 3 }), fieldValue),
    svc_databases: fc.oneof(
      fc.array(objectsShapedLike(['database_id', 'folder_statistics']), { maxLength: 2 }),
      fieldValue,
    ),
  },
  { requiredKeys: [] },
);

describe('the compiled result check agrees with zod', () => {
  it.each([
    ['workgroup lists', WorkgroupSchema.array(), fc.array(workgroupLike, { maxLength: 3 })],
    [
      'allow lists',
      AllowListEntrySchema.array(),
      fc.array(objectsShapedLike(['cidr', 'id', 'note']), { maxLength: 3 }),
    ],
    [
      'cloud providers',
      CloudProviderSchema,
      objectsShapedLike(['id', 'status', 'node_group_config', 'options', 'version']),
    ],
    ['db users', DbUserSchema, objectsShapedLike(['username', 'metadata', 'enabled'])],
    [
      'org users',
      OrgUserSchema.array(),
      fc.array(objectsShapedLike(['roles', 'metadata', 'enabled']), { maxLength: 2 }),
    ],
  ] as const)(
    'accepts exactly what zod accepts for %s, and returns what zod returns',
    (_name, schema, arbitrary) => {
      const parse = createResultParser(schema);
      fc.assert(
        fc.property(arbitrary, (input) => {
          const fast = parse(input);
          const reference = schema.safeParse(input);
          expect(fast.success).toBe(reference.success);
          if (fast.success && reference.success) expect(fast.data).toEqual(reference.data);
        }),
        { numRuns: 1000 },
      );
    },
  );

  it('falls back to zod for a schema with a transform, and names the failing place', () => {
    const parse = createResultParser(CurrentIpSchema);
    expect(parse({ ' IsAllowed': true, CurrentIP: '192.0.2.1' })).toEqual({
      success: true,
      data: { isAllowed: true, currentIp: '192.0.2.1' },
    });
    expect(parse({ CurrentIP: 7 })).toMatchObject({ success: false, where: 'Result.CurrentIP' });
  });
});
