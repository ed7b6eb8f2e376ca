export * from './types.js';
export * from './config.js';
export * from './errors.js';
export * from './interceptors.js';
export { Consumer, WakeupError, type OffsetToCommit } from './consumer.js';
export { createAssignors } from './assignor-registry.js';
