import { FAILSAFE_SCHEMA, type Schema, Type } from 'js-yaml';

/**
 * A js-yaml schema that reads plain scalars exactly as the `yaml` package's YAML 1.2 core schema
 * does (`yaml/dist/schema/core`), so both readers give the same values. js-yaml's own CORE_SCHEMA
 * differs at the edges: it reads `0b101`, `+0x10` and `-0o7` as numbers and `+.5` as a string;
 * `yaml` does the opposite. The tests compare the two readers on generated documents.
 *
 * The patterns and conversions below are `yaml`'s, in its order: null, bool, octal, decimal and hex
 * integers, then special, exponent and plain floats. js-yaml only consults implicit types for plain
 * (unquoted, untagged) scalars, as `yaml` does.
 */

const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

// js-yaml tries every implicit type on every plain scalar, most of them words: each type looks
// at the first character before it runs its patterns.
const startsNull = (data: string) => data === '' || data[0] === '~' || data[0] === 'n' || data[0] === 'N';
const startsBool = (data: string) => 'tTfF'.includes(data[0] ?? ' ');
const startsNumber = (data: string) => '0123456789+-.'.includes(data[0] ?? ' ');

const nullType = new Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (data: string) => startsNull(data) && NULL.test(data),
  construct: () => null,
});

const boolType = new Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (data: string) => startsBool(data) && BOOL.test(data),
  construct: (data: string) => data[0] === 't' || data[0] === 'T',
});

// `yaml` converts with parseInt on the digits after the prefix: `-0` is -0, and integers past 2^53
// lose precision the same way in both readers.
const intType = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data: string) =>
    startsNumber(data) && (INT_OCT.test(data) || INT.test(data) || INT_HEX.test(data)),
  construct: (data: string) => {
    if (INT_OCT.test(data)) return Number.parseInt(data.substring(2), 8);
    if (INT_HEX.test(data)) return Number.parseInt(data.substring(2), 16);
    return Number.parseInt(data, 10);
  },
});

const floatType = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data: string) =>
    startsNumber(data) && (FLOAT_NAN.test(data) || FLOAT_EXP.test(data) || FLOAT.test(data)),
  construct: (data: string) => {
    if (!FLOAT_NAN.test(data)) return Number.parseFloat(data);
    if (data.slice(-3).toLowerCase() === 'nan') return Number.NaN;
    return data[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  },
});

/**
 * A plain `<<`. js-yaml's own merge type applies merges while parsing, with other semantics than
 * our AST walk (merged keys land where `<<` stands; merges chain through merged maps), so this type
 * only marks the key and `readYamlFast` applies the merge the way the AST walk does. As a map key
 * the marker becomes a string no document will hold (js-yaml keys are strings; this one has a
 * random part), a fresh one each time so that two `<<` in one map are not a duplicate key.
 */
export class MergeKey {
  static readonly prefix = `\u0000<<${Math.random().toString(36).slice(2)}:`;
  static #count = 0;
  get [Symbol.toStringTag](): string {
    return 'MergeKey';
  }
  toString(): string {
    MergeKey.#count += 1;
    return `${MergeKey.prefix}${MergeKey.#count}`;
  }
}

export const MERGE_KEY = new MergeKey();

const mergeKeyType = new Type('tag:nightshift:merge-key', {
  kind: 'scalar',
  resolve: (data: string) => data === '<<',
  construct: () => MERGE_KEY,
});

/** `yaml`'s core schema with merge keys, for js-yaml. */
export const YAML_CORE_SCHEMA: Schema = FAILSAFE_SCHEMA.extend({
  implicit: [nullType, boolType, intType, floatType, mergeKeyType],
});

export function isMergeKey(key: string): boolean {
  return key.startsWith(MergeKey.prefix);
}
