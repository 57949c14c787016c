import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';

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
  }: {
    /** The file changed but cannot be read (deleted, or no longer readable): the policy in force stays. */
    onUnreadable?: (error: Error) => void;
    debounceMs?: number;
  } = {},
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let last: string | undefined;
  // a SIGHUP reloads whatever the file holds, even the text last read
  let forced = false;
  const reload = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(async () => {
      const text = await readFile(file, 'utf8').catch((error: Error) => {
        onUnreadable?.(error);
        return undefined;
      });
      if (text === undefined || (text === last && !forced)) return;
      forced = false;
      last = text;
      await onChange(text);
    }, debounceMs);
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
    if (timer) clearTimeout(timer);
    watcher.close();
    process.off('SIGHUP', onHup);
  };
}
