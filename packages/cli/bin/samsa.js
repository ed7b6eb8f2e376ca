#!/usr/bin/env node
// A broker does its file I/O (creating directories and files, checkpoint writes, fsyncs, renames)
// on libuv's thread pool, 4 threads unless UV_THREADPOOL_SIZE says otherwise: with thousands of
// partitions created, loaded or closed at once, 4 threads waiting on a busy disk cap a broker.
// Kafka sizes its pools in config (num.io.threads, num.recovery.threads.per.data.dir); the thread
// pool is sized when first used, hence here, before anything is loaded. This file is CommonJS (see
// package.json beside it): loading an ES module entry uses the thread pool first, and the setting
// would come too late. An explicit UV_THREADPOOL_SIZE wins.
'use strict';
if (process.argv[2] === 'broker') process.env.UV_THREADPOOL_SIZE ??= '32';
import('../dist/main.js').catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
});
