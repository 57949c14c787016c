export * from './api/index.js';
export * from './errors/index.js';
export * from './sim/index.js';
