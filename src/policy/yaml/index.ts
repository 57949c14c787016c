export type { ValuePath } from '../paths.js';
export { type ReadYamlOptions, readYaml } from './read.js';
export type { Anchor, YamlSource } from './source.js';
export { MAX_ALIAS_EXPANSIONS, MAX_DEPTH } from './walk.js';
