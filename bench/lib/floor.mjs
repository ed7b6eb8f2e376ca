// The Node I/O floor (floor/run.sh of the reference scripts, SAMSA_BENCH_REFERENCE_DIR): 1 MiB
// frames over loopback, crc32c, appended to a file, 5 in flight. Its lines look like
//   floor run=1 broker mode=stream crc=1 fsyncEvery=0 frames=2048 bytes=2147483648 549 MB/s cpu=104%
// (MB = 10^6 bytes, measured on its broker side).
import { join } from 'node:path';
import { runScript, referenceScriptDir } from './script.mjs';

const LINE = /^floor run=(\d+) .*?\bframes=(\d+) bytes=(\d+) (\d+(?:\.\d+)?) MB\/s cpu=(\d+)%/;

export function parseFloorLine(line) {
  const m = LINE.exec(line);
  if (!m) return null;
  return { run: Number(m[1]), frames: Number(m[2]), bytes: Number(m[3]), mbps: Number(m[4]), cpuPct: Number(m[5]) };
}

/** Runs the floor `runs` times with `frames` 1 MiB frames each; one parsed result per run. */
export async function runFloor({ frames = 2048, runs = 1, log } = {}) {
  const dir = referenceScriptDir('floor');
  const out = [];
  const lines = await runScript(join(dir, 'run.sh'), [frames, runs], {
    workDirPrefix: '/tmp/floor.',
    onLine: (l) => {
      const r = parseFloorLine(l);
      if (r) {
        out.push(r);
        log?.(`floor run: ${r.mbps} MB/s (broker cpu ${r.cpuPct}%)`);
      }
    },
  });
  if (out.length !== runs) throw new Error(`floor: expected ${runs} "floor run=" lines, got:\n${lines.join('\n')}`);
  return out;
}
