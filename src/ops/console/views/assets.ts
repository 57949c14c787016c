import { createHash } from 'node:crypto';
import { CONSOLE_JS } from './script.js';
import { CONSOLE_CSS } from './style.js';

export { CONSOLE_CSS, CONSOLE_JS };

/** Changes whenever the stylesheet or the script does: pages ask for `?v=<it>`, so either can be cached for long. */
export const assetVersion = createHash('sha256')
  .update(CONSOLE_CSS)
  .update('\0')
  .update(CONSOLE_JS)
  .digest('hex')
  .slice(0, 16);
