/**
 * A deployment's Redis command as its container runs it: `redis-server` and its flags, or a
 * `sh -c` script that execs `redis-server -` with its flags and reads further configuration (the
 * password) from a here-document. `$$` is compose's escape of `$`: pass `composeEscapes` for a
 * compose file.
 */
export interface RedisCommand {
  /** The script, when the command is `sh -c <script>`, with compose's `$$` made `$` if asked. */
  readonly script: string | undefined;
  /** The value after `name` among redis-server's flags. */
  flag(name: string): string | undefined;
  /** The file `requirepass $(cat <file>)` reads the password from, if the configuration does. */
  readonly passwordFile: string | undefined;
}

export function redisCommand(argv: readonly string[], composeEscapes = false): RedisCommand {
  const raw = argv[0] === 'sh' && argv[1] === '-c' ? argv[2] : undefined;
  const script = composeEscapes ? raw?.split('$$').join('$') : raw;
  const flags = script
    ? (/^\s*exec redis-server - (.*?)\s*<<\s*EOF\s*$/m.exec(script)?.[1]?.split(/\s+/) ?? [])
    : argv.slice(argv.indexOf('redis-server') + 1);
  const passwordFile = script
    ? /^\s*requirepass \$\(cat (\/\S+)\)\s*$/m.exec(script.split(/^\s*EOF\s*$/m)[0] ?? '')?.[1]
    : undefined;
  return {
    script,
    flag: (name) => {
      const index = flags.indexOf(name);
      return index === -1 ? undefined : flags[index + 1];
    },
    passwordFile,
  };
}
