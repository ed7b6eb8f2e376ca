export * from './ports.js';
export * from './four-letter.js';
export * from './managed-process.js';
export * from './zookeeper.js';
export * from './local-cluster.js';
export * from './broker-process.js';
export * from './zookeeper-auth.js';
export * from './secure/certs.js';
