export {};
export * from './codec/index.js';
export * from './headers.js';
export * from './generated/index.js';
export * from './api-versions.js';
export * from './frames.js';
export * from './errors.js';
export * from './records/index.js';
export * from './control/index.js';
