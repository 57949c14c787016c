// Loaded with `node --import`: appends the URL of every module the process loads, one a line, to
// the file NIGHTSHIFT_TEST_MODULE_TRACE names. Lets a test see what a CLI role loaded.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const trace = process.env.NIGHTSHIFT_TEST_MODULE_TRACE;
if (trace)
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(trace, `${url}\n`);
      return nextLoad(url, context);
    },
  });
