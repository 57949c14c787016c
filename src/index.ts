export * from './api/index.js';
export * from './sim/index.js';
