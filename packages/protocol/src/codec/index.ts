export * from './errors.js';
export * from './types.js';
export * from './reader.js';
export * from './writer.js';
