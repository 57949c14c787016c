export { createLogger, type Logger, silentLogger } from './logger.js';
