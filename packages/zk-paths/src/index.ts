export * from './zk-errors.js';
export * from './zk-client.js';
export * from './json.js';
export * from './znodes.js';
export * from './topic-id.js';
export * from './fenced.js';
export * from './kafka-zk.js';
