/** A path into the policy value, as zod reports it: map keys and list indexes. */
export type ValuePath = readonly PropertyKey[];

/** One string for a path, for set lookups; NUL cannot occur in a YAML key. */
export function pathKey(path: ValuePath): string {
  return path.map(String).join('\u0000');
}

/** `jobs.nightly-pause.retry.attempts`, `targets.dev.workgroups[0]`, `jobs["a b"]`. */
export function formatPath(path: ValuePath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(String(segment)))
      text += text === '' ? String(segment) : `.${String(segment)}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/** `path: message`, or just the message at the top of the file. */
export function labelled(path: ValuePath, message: string): string {
  const label = formatPath(path);
  return label === '' ? message : `${label}: ${message}`;
}
