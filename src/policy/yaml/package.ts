import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Yaml from 'yaml';

const require = createRequire(import.meta.url);

/**
 * The `yaml` package, as its ES module build. The Node build reads the environment variable
 * LOG_TOKENS (a debugging switch) for every token it parses, and each read of the environment
 * calls into the runtime: 150 ms of the 700 ms the package took to parse a 10,000-job policy. The ES build is made from the same source with that switch
 * compiled out. The package does not export it, so it is found beside the Node build; a Node
 * from 22.12 on can require an ES module.
 */
export const yaml: typeof Yaml = require(join(dirname(require.resolve('yaml')), '../browser/dist/index.js'));
