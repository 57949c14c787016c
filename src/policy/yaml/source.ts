import type { PolicyProblem, SourceLocation } from '../errors.js';
import type { VariableRead } from '../interpolate.js';
import { pathKey, type ValuePath } from '../paths.js';

/** A string that came (at least partly) from `${VAR}`s. */
export interface Interpolation {
  /** The text as written, `${VAR}`s and all. */
  readonly template: string;
  readonly reads: readonly VariableRead[];
}

/** Where to point for a path: at the key of a map entry, or at its value. */
export type Anchor = 'key' | 'value';

/** A YAML file read into plain values, with a way back from any value to its line and column. */
export interface YamlSource {
  readonly file: string;
  /** The document as plain data (maps are null-prototype objects), `${VAR}`s replaced. */
  readonly value: unknown;
  /** Syntax errors, duplicate keys, bad aliases and failed interpolations. */
  readonly problems: readonly PolicyProblem[];
  /** The location of the node at `path`, or of its nearest ancestor that exists. */
  locate(path: ValuePath, anchor?: Anchor): SourceLocation;
  /** Whether the string at `path` came (at least partly) from an environment variable. */
  isInterpolated(path: ValuePath): boolean;
  /** The text as written, `${VAR}`s and all, of an interpolated string. */
  templateOf(path: ValuePath): string | undefined;
  /** The `${NAME}`s of the string at `path`, with what each became; none when it read no variable. */
  readsAt(path: ValuePath): readonly VariableRead[];
  /** Paths below `prefix` whose strings came from the environment, relative to `prefix`. */
  interpolatedBelow(prefix: ValuePath): string[][];
}

/** A YamlSource over read values; `interpolated` holds each interpolated string's origin, by `pathKey`. */
export function sourceOf(
  file: string,
  value: unknown,
  problems: readonly PolicyProblem[],
  locate: YamlSource['locate'],
  interpolated: ReadonlyMap<string, Interpolation>,
): YamlSource {
  return {
    file,
    value,
    problems,
    locate,
    isInterpolated: (path) => interpolated.has(pathKey(path)),
    templateOf: (path) => interpolated.get(pathKey(path))?.template,
    readsAt: (path) => interpolated.get(pathKey(path))?.reads ?? [],
    interpolatedBelow: (prefix) => {
      const head = prefix.length === 0 ? '' : `${pathKey(prefix)}\u0000`;
      const found: string[][] = [];
      for (const key of interpolated.keys()) {
        if (key.startsWith(head)) found.push(key.slice(head.length).split('\u0000'));
      }
      return found;
    },
  };
}
