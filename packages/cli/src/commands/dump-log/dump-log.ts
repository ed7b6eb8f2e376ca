/**
 * `samsa dump-log`: Kafka's kafka-dump-log.sh (DumpLogSegments) for log segment files: one line per
 * batch (`baseOffset: … crc: … isvalid: …`) and, with --deep-iteration or --print-data-log, one
 * `| offset: …` line per record (with --print-data-log its key and payload as UTF-8). The chaos
 * suite's divergence check reads the same files (@samsa/client verify/log-files.ts).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { compressionName, recordBatches, TimestampType } from '@samsa/protocol';
import { commandBuilder, printer, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

export interface DumpLogOptions {
  printDataLog: boolean;
  deepIteration: boolean;
}

const tsName = (t: number) => (t === TimestampType.LOG_APPEND_TIME ? 'LogAppendTime' : 'CreateTime');

/** The dump of one `.log` segment's bytes, as Kafka prints it (without the `Dumping <file>` line). */
export function dumpSegment(fileName: string, buf: Buffer, o: DumpLogOptions): { lines: string[]; nonConsecutive: Array<[number, number]> } {
  const lines: string[] = [];
  const nonConsecutive: Array<[number, number]> = [];
  const start = Number(basename(fileName).split('.')[0]);
  lines.push(`Log starting offset: ${start}`);
  const deep = o.deepIteration || o.printDataLog;
  const it = recordBatches(buf);
  let validBytes = 0;
  let last = -1;
  for (const b of it) {
    const deleteHorizon = b.hasDeleteHorizon ? `OptionalLong[${b.baseTimestamp}]` : 'OptionalLong.empty';
    lines.push(
      `baseOffset: ${b.baseOffset} lastOffset: ${b.lastOffset} count: ${b.recordCount} baseSequence: ${b.baseSequence} lastSequence: ${b.lastSequence} ` +
        `producerId: ${b.producerId} producerEpoch: ${b.producerEpoch} partitionLeaderEpoch: ${b.partitionLeaderEpoch} isTransactional: ${b.isTransactional} ` +
        `isControl: ${b.isControl} deleteHorizonMs: ${deleteHorizon} position: ${validBytes} ${tsName(b.timestampType)}: ${b.maxTimestamp} ` +
        `size: ${b.buffer.length} magic: ${b.magic} compresscodec: ${compressionName(b.compression)} crc: ${b.crc >>> 0} isvalid: ${b.isValidCrc()}`,
    );
    if (deep) {
      for (const r of b.records()) {
        const off = Number(r.offset);
        if (last !== -1 && off !== last + 1) nonConsecutive.push([last, off]);
        last = off;
        const seq = b.baseSequence >= 0 ? (b.baseSequence + r.offsetDelta) % 2147483648 : -1;
        let line = `| offset: ${off} ${tsName(b.timestampType)}: ${r.timestamp} keySize: ${r.key?.length ?? -1} valueSize: ${r.value?.length ?? -1}`;
        line += ` sequence: ${seq} headerKeys: [${r.headers.map((h) => h.key).join(',')}]`;
        if (o.printDataLog && !b.isControl) {
          if (r.key !== null) line += ` key: ${r.key.toString('utf8')}`;
          if (r.value !== null) line += ` payload: ${r.value.toString('utf8')}`;
        }
        lines.push(line);
      }
    }
    validBytes += b.buffer.length;
  }
  const trailing = buf.length - validBytes;
  if (trailing > 0) lines.push(`Found ${trailing} invalid bytes at the end of ${basename(fileName)}`);
  return { lines, nonConsecutive };
}

export interface RawDumpLogOptions {
  files: string;
  printDataLog?: boolean;
  deepIteration?: boolean;
}

function defineDumpLogOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--files <files>', 'comma-separated .log segment files')
    .option('--print-data-log', 'print the records, with their keys and payloads')
    .option('--deep-iteration', 'print every record (not only batches)');
}

/** Dumps each file; files that are not `.log` segments are skipped with a notice (exit code left as it is). */
export function executeDumpLogCommand(raw: RawDumpLogOptions, io: CommandIo, readFile: (path: string) => Buffer = (f) => readFileSync(f)): void {
  const out = printer(io);
  const nonConsecutive = new Map<string, Array<[number, number]>>();
  for (const file of raw.files
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)) {
    out(`Dumping ${file}`);
    if (!file.endsWith('.log')) {
      io.err(`Ignoring unknown file ${file}\n`);
      continue;
    }
    const d = dumpSegment(file, readFile(file), { printDataLog: raw.printDataLog === true, deepIteration: raw.deepIteration === true });
    for (const l of d.lines) out(l);
    if (d.nonConsecutive.length) nonConsecutive.set(file, d.nonConsecutive);
  }
  for (const [file, pairs] of nonConsecutive) {
    io.err(`Non-consecutive offsets in ${file}\n`);
    for (const [a, b] of pairs) io.err(`  ${a} is followed by ${b}\n`);
  }
}

export const dumpLogCommand: CommandBuilder = commandBuilder(
  'dump-log',
  "Print the batches and records of log segment files (Kafka's kafka-dump-log.sh)",
  defineDumpLogOptions,
  async (raw: RawDumpLogOptions, io) => executeDumpLogCommand(raw, io),
);

export function registerDumpLogCommand(program: Command): void {
  registerCommand(program, dumpLogCommand);
}
