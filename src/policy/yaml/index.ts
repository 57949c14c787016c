export type { ValuePath } from '../paths.js';
export { MAX_ALIASES } from './alias-limit.js';
export { locatorOf, type ReadYamlOptions, readYaml } from './read.js';
export type { Anchor, YamlSource } from './source.js';
export { MAX_ALIAS_VALUES, MAX_DEPTH } from './walk.js';
