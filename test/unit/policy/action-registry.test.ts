import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { actionRegistry } from '../../../jobs/index.js';
import { ApiClient } from '../../../src/api/index.js';
import { createActionCatalog, parsePolicy } from '../../../src/policy/index.js';

const specs = [...actionRegistry.values()];
const reference = readFileSync(new URL('../../../docs/policy.md', import.meta.url), 'utf8');
const actionsDoc = readFileSync(new URL('../../../docs/actions.md', import.meta.url), 'utf8');
/** The action modules and what they share in jobs/support/, plus the run engine that lists the fleet for them. */
const actionSources = ['../../../jobs/', '../../../jobs/support/', '../../../src/engine/']
  .map((path) => new URL(path, import.meta.url))
  .flatMap((dir) =>
    readdirSync(dir)
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(new URL(file, dir), 'utf8')),
  )
  .join('\n');

/** The section of docs/actions.md about one action: from its heading to the next action's. */
function docSection(name: string): string {
  const start = actionsDoc.indexOf(`\n## \`${name}\`\n`);
  if (start < 0) return '';
  const end = actionsDoc.indexOf('\n## `', start + 1);
  return actionsDoc.slice(start, end < 0 ? undefined : end);
}

describe('registered actions', () => {
  it('are the fifteen actions of the action library', () => {
    expect([...actionRegistry.keys()].sort()).toEqual(
      [
        'allow-list-audit',
        'check-ip',
        'cloud-provider-report',
        'create-db-user',
        'delete-backup',
        'delete-database',
        'disable-allow-list',
        'inventory',
        'org-user-review',
        'pause',
        'restore-drill',
        'resume',
        'rotate-db-password',
        'update-cloud-provider',
        'upgrade-cloud-provider',
      ].sort(),
    );
  });

  it('are destructive exactly where they delete, disable or upgrade, so those jobs need confirm: true', () => {
    expect(
      specs
        .filter((spec) => spec.destructive)
        .map((spec) => spec.name)
        .sort(),
    ).toEqual(['delete-backup', 'delete-database', 'disable-allow-list', 'upgrade-cloud-provider']);
  });

  it('put every one of the 15 API operations to work in at least one action module', () => {
    const operations = Object.getOwnPropertyNames(ApiClient.prototype).filter(
      (name) => name !== 'constructor' && name !== 'close',
    );
    expect(operations).toHaveLength(15);
    for (const operation of operations)
      expect(actionSources, operation).toMatch(new RegExp(`\\.${operation}\\(`));
  });

  it.each(specs)('$name has a strict params schema: an unknown parameter is refused', (spec) => {
    expect(spec.params).toBeInstanceOf(z.ZodObject);
    const result = spec.params.safeParse({ notAParameter: true });
    expect(result.success).toBe(false);
    expect(result.error?.issues.some((issue) => issue.code === 'unrecognized_keys')).toBe(true);
  });

  it.each(specs)('$name has an example policy that validates and uses it', (spec) => {
    const policy = parsePolicy(spec.example, `${spec.name} example`, { registry: actionRegistry, env: {} });
    expect(policy.jobs.some((job) => job.action === spec.name)).toBe(true);
  });

  it.each(specs)(
    '$name is named in docs/policy.md and has a section in docs/actions.md naming every parameter',
    (spec) => {
      expect(reference).toContain(`\`${spec.name}\``);
      const section = docSection(spec.name);
      expect(section, `docs/actions.md has no "## \`${spec.name}\`" section`).not.toBe('');
      for (const parameter of Object.keys((spec.params as z.ZodObject).shape)) {
        expect(section, `${spec.name}: parameter ${parameter}`).toContain(`\`${parameter}\``);
      }
    },
  );

  it.each(specs.filter((spec) => spec.jobReferences))(
    '$name names other jobs only through parameters of its own, each asking for a registered action',
    (spec) => {
      for (const [parameter, { action }] of Object.entries(spec.jobReferences ?? {})) {
        expect(Object.keys((spec.params as z.ZodObject).shape)).toContain(parameter);
        expect(actionRegistry.has(action), `${spec.name}.${parameter}: action ${action}`).toBe(true);
      }
    },
  );

  it('refuses two actions with one name', () => {
    const [first] = specs;
    if (!first) throw new Error('no actions');
    expect(() => createActionCatalog([first, first])).toThrow(`action "${first.name}" is registered twice`);
  });
});

describe('module boundaries', () => {
  it('src/policy imports neither jobs/ nor src/engine: it sees actions only through its ActionCatalogEntry port', () => {
    const directory = new URL('../../../src/policy/', import.meta.url);
    const files = readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    expect(files).toContain('yaml/read.ts');
    for (const file of files) {
      const text = readFileSync(new URL(file, directory), 'utf8');
      expect(text, file).not.toMatch(/from '(\.\.\/)+(jobs|engine)\//);
    }
  });
});
