export { assetVersion, CONSOLE_CSS, CONSOLE_JS } from './assets.js';
export { FAVICON } from './favicon.js';
export { renderFindings } from './findings.js';
export { DETAILS_TABLE_LIMIT, renderFleet } from './fleet.js';
export type { PageContext } from './layout.js';
export { renderRun, TARGETS_TABLE_LIMIT } from './run.js';
export { renderRuns } from './runs.js';
export { renderSavings } from './savings.js';
export { renderSchedules } from './schedules.js';
