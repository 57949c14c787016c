import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type Clock, systemClock, type Timer } from '../time/index.js';

/**
 * Calls `onChange` with the policy's new text when the file changes or the process gets
 * SIGHUP, and `onUnreadable` when it changed but cannot be read. Watches the folder, not the file: editors and config-map updates replace the file,
 * which ends a watch on the file itself. Bursts of events within `debounceMs` count once.
 */
export function watchPolicy(
  file: string,
  onChange: (text: string) => Promise<void>,
  {
    onUnreadable,
    debounceMs = 200,
    clock = systemClock,
  }: {
    /** The file changed but cannot be read (deleted, or no longer readable): the policy in force stays. */
    onUnreadable?: (error: Error) => void;
    debounceMs?: number;
    /** What the debounce waits on. Default: the system's clock. */
    clock?: Clock;
  } = {},
): () => void {
  let timer: Timer | undefined;
  let last: string | undefined;
  // a SIGHUP reloads whatever the file holds, even the text last read
  let forced = false;
  const reload = () => {
    timer?.cancel();
    timer = clock.setTimer(debounceMs, async () => {
      const text = await readFile(file, 'utf8').catch((error: Error) => {
        onUnreadable?.(error);
        return undefined;
      });
      if (text === undefined || (text === last && !forced)) return;
      forced = false;
      last = text;
      await onChange(text);
    });
  };
  const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) || '/' : '.';
  const name = file.slice(file.lastIndexOf('/') + 1);
  const watcher = watch(folder, (_event, changed) => {
    if (!changed || changed === name || changed.startsWith('..')) reload();
  });
  const onHup = () => {
    forced = true;
    reload();
  };
  process.on('SIGHUP', onHup);
  void readFile(file, 'utf8').then((text) => {
    last ??= text;
  });
  return () => {
    timer?.cancel();
    watcher.close();
    process.off('SIGHUP', onHup);
  };
}
