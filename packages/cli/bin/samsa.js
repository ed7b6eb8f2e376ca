#!/usr/bin/env node
// A broker does its file I/O (segment and index files, checkpoint writes with fsync, renames)
// on libuv's thread pool, 4 threads unless UV_THREADPOOL_SIZE says otherwise: with thousands of
// partitions, whose creation fsyncs files, 4 threads waiting on fsync cap a broker at ~70 new
// partitions per second on a busy disk. Kafka sizes its pools in config (num.io.threads,
// num.recovery.threads.per.data.dir); the thread pool can only be sized before its first use,
// hence here, before anything is loaded. An explicit UV_THREADPOOL_SIZE wins.
if (process.argv[2] === 'broker') process.env.UV_THREADPOOL_SIZE ??= '32';
await import('../dist/main.js');
