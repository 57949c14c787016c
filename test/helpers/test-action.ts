import { z } from 'zod';
import type { Action } from '../../src/engine/index.js';

/** A workspace action for engine tests: `run` in a real run, `plan` (default: it only looks) in a dry run. */
export function testAction(
  name: string,
  run: Action['run'],
  plan: Action['plan'] = async () => undefined,
): Action {
  return {
    name,
    description: 'Test only.',
    destructive: false,
    scope: 'workspace',
    params: z.strictObject({}),
    example: '',
    plan,
    run,
  };
}
