import { randomUUID } from 'node:crypto';
import { access, mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ActionFiles, ActionIo } from './action.js';
import { nodeSecretSinks } from './node-secret-sinks.js';
import type { SinkCommandAllowlist } from './sink-commands.js';

export interface NodeActionIoOptions {
  /**
   * The worker's environment, as src/config read it: where a sink command's `PATH`, `HOME` and the
   * variables its `env:` names come from (nothing else of it reaches the command).
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** The programs a sink command may run (`NIGHTSHIFT_SINK_COMMANDS`). Default: any. */
  sinkCommands?: SinkCommandAllowlist;
}

/** The action ports on this machine's file system and processes. */
export function nodeActionIo({ environment, sinkCommands }: NodeActionIoOptions): ActionIo {
  return { files: nodeFiles, secretSinks: nodeSecretSinks({ environment, sinkCommands }) };
}

const nodeFiles: ActionFiles = {
  async exists(path) {
    return access(path).then(
      () => true,
      () => false,
    );
  },

  async writeAtomically(path, content) {
    await mkdir(dirname(path), { recursive: true });
    const temporary = join(dirname(path), `.${basename(path)}.${randomUUID().slice(0, 8)}.tmp`);
    try {
      const file = await open(temporary, 'wx');
      try {
        await file.writeFile(content, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  },
};
