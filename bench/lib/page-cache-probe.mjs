// How fast this machine writes new data into the page cache right now: 64 MiB in 16 KiB writes
// (a Produce batch's size) to a new file next to the brokers' logs, timed, then deleted.
// On this workplace's VMs the figure moves between ~0.4 and ~3 GB/s within minutes: the
// hypervisor's balloon takes back free guest memory (free page reporting), and each page the
// kernel then hands to the page cache costs a fault in the host on first touch. A broker pays
// that on every byte it appends (and on RF=3 every byte three times), so the probe's figure,
// printed before and after a benchmark, tells in which state the box ran it.
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function probePageCacheWrites(dir = tmpdir(), totalBytes = 64 * 1024 * 1024, chunk = 16 * 1024) {
  const file = join(dir, `samsa-page-cache-probe-${process.pid}`);
  const buf = Buffer.alloc(chunk, 0x61);
  const fd = openSync(file, 'w');
  const t0 = process.hrtime.bigint();
  try {
    for (let pos = 0; pos < totalBytes; pos += chunk) writeSync(fd, buf, 0, chunk, pos);
  } finally {
    closeSync(fd);
    unlinkSync(file);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { mbps: Math.round(totalBytes / 1e6 / seconds), bytes: totalBytes, chunk };
}
