/**
 * Golden bytes: request frames captured from real clients (kcat/librdkafka, KafkaJS,
 * @platformatic/kafka) by scripts/capture-frames.mjs, one per (client, api, version), in
 * src/fixtures/<client>/. Each must decode completely, carry the header the client sent (client id,
 * correlation id read from the raw bytes at capture time) and what the client was asked to send
 * (manifest "expected": topic names, partitions, acks, keys and values...), and re-encode to the
 * identical bytes.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeRequest, encodeRequest } from './frames.js';
import type { DecodedRequest } from './frames.js';
import { API_TABLE } from './generated/index.js';
import { scanRecordSet } from './records/index.js';

interface ManifestEntry {
  file: string;
  client: (typeof CLIENTS)[number];
  clientVersion: string;
  /** Set when a step's frame sits next to another of the same (client, api, version), e.g. 'txn'. */
  variant?: string;
  api: string;
  apiKey: number;
  apiVersion: number;
  bytes: number;
  step: string;
  header: { clientId: string; correlationId: number };
  expected: Record<string, unknown>;
}

/** librdkafka-python: Debian's python3-confluent-kafka, the same librdkafka 2.0.2 as kcat (which has no transactions). */
const CLIENTS = ['kcat', 'kafkajs', 'platformatic', 'librdkafka-python'] as const;

const dir = new URL('./fixtures/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as ManifestEntry[];
const load = (file: string): Buffer => readFileSync(new URL(file, dir));

function decodeOk(frame: Buffer): DecodedRequest {
  const d = decodeRequest(frame);
  if (!d.ok) throw new Error(`decode failed: ${d.error}${d.error === 'MALFORMED' ? `: ${d.cause.message}` : ''}`);
  return d;
}

const str = (b: Buffer | null): string | null => (b === null ? null : b.toString('utf8'));

/** Records of one partition's `records` field, as { key, value, headers, timestamp } strings. */
function records(buf: Buffer | null) {
  if (buf === null) return null;
  const { batches, partial } = scanRecordSet(buf);
  expect(partial, 'incomplete trailing batch').toBeNull();
  return batches.flatMap((b) => {
    expect(b.isValidCrc(), 'batch CRC').toBe(true);
    return b.toArray().map((r) => ({
      key: str(r.key),
      value: str(r.value),
      headers: r.headers.map((h) => ({ key: h.key, value: str(h.value) })),
      timestamp: String(r.timestamp),
    }));
  });
}

/** Whether every batch of a partition's `records` is transactional, and their producer id. */
function batchFlags(buf: Buffer | null) {
  const batches = buf === null ? [] : scanRecordSet(buf).batches;
  const ids = [...new Set(batches.map((b) => String(b.producerId)))];
  return { transactional: batches.length > 0 && batches.every((b) => b.isTransactional), producerId: ids.length === 1 ? ids[0] : null };
}

/** The decoded body in the manifest's "expected" shape (compared with toMatchObject). */
function project(d: DecodedRequest): Record<string, unknown> {
  switch (d.apiKey) {
    case 18:
      return { clientSoftwareName: d.body.clientSoftwareName, clientSoftwareVersion: d.body.clientSoftwareVersion };
    case 3:
      return { topics: d.body.topics === null ? null : d.body.topics.map((t) => t.name) };
    case 0:
      return {
        acks: d.body.acks,
        transactionalId: d.body.transactionalId,
        topics: d.body.topicData.map((t) => ({
          name: t.name,
          partitions: t.partitionData.map((p) => ({ index: p.index, ...batchFlags(p.records), records: records(p.records) })),
        })),
      };
    case 1:
      return {
        topics: d.body.topics.map((t) => ({
          ...(d.apiVersion < 13 ? { name: t.topic } : { topicIdHex: t.topicId.toString('hex') }),
          partitions: t.partitions.map((p) => ({ partition: p.partition, fetchOffset: String(p.fetchOffset) })),
        })),
      };
    case 2:
      return {
        topics: d.body.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, timestamp: String(p.timestamp) })),
        })),
      };
    case 19:
      return {
        topics: d.body.topics.map((t) => ({ name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor })),
        validateOnly: d.body.validateOnly,
      };
    case 20:
      return { names: d.apiVersion >= 6 ? d.body.topics.map((t) => t.name) : d.body.topicNames };
    case 32:
      return { resources: d.body.resources.map((r) => ({ resourceType: r.resourceType, resourceName: r.resourceName })) };
    case 22:
      return { transactionalId: d.body.transactionalId };
    case 10:
      return { keys: d.apiVersion >= 4 ? d.body.coordinatorKeys : [d.body.key], keyType: d.body.keyType };
    case 24:
      return { transactionalId: d.body.transactionalId, producerId: String(d.body.producerId), topics: d.body.topics };
    case 25:
      return { transactionalId: d.body.transactionalId, producerId: String(d.body.producerId), groupId: d.body.groupId };
    case 26:
      return { transactionalId: d.body.transactionalId, producerId: String(d.body.producerId), committed: d.body.committed };
    case 28:
      return {
        transactionalId: d.body.transactionalId,
        groupId: d.body.groupId,
        producerId: String(d.body.producerId),
        generationId: d.body.generationId,
        memberId: d.body.memberId,
        topics: d.body.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, committedOffset: String(p.committedOffset) })),
        })),
      };
    default:
      throw new Error(`no projection for api ${d.api.name}`);
  }
}

describe('golden request frames from real clients', () => {
  it('the manifest lists every captured file, and only those', () => {
    const onDisk = CLIENTS.flatMap((c) => {
      const sub = new URL(`${c}/`, dir);
      return statSync(sub, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(sub).map((f) => `${c}/${f}`) : [];
    }).sort();
    expect(manifest.map((m) => m.file).sort()).toEqual(onDisk);
    expect(new Set(manifest.map((m) => `${m.client} ${m.apiKey} ${m.apiVersion} ${m.variant ?? ''}`)).size).toBe(manifest.length);
  });

  it('covers each client: ApiVersions, Metadata and Produce at least; the consumers also Fetch', () => {
    const apis = (c: string) => manifest.filter((m) => m.client === c).map((m) => m.api);
    for (const c of CLIENTS) expect(apis(c), c).toEqual(expect.arrayContaining(['ApiVersions', 'Metadata', 'Produce']));
    // the transactional flow: KafkaJS, librdkafka (through python3-confluent-kafka) and platformatic
    const TXN = ['FindCoordinator', 'InitProducerId', 'AddPartitionsToTxn', 'AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn'];
    for (const c of ['kafkajs', 'librdkafka-python', 'platformatic']) expect(apis(c), c).toEqual(expect.arrayContaining(TXN));
    expect(apis('kcat')).toEqual(expect.arrayContaining(['Fetch', 'ListOffsets', 'InitProducerId']));
    expect(apis('platformatic')).toEqual(expect.arrayContaining(['Fetch', 'ListOffsets', 'CreateTopics', 'DeleteTopics']));
    expect(apis('kafkajs')).toEqual(expect.arrayContaining(['CreateTopics', 'DeleteTopics', 'DescribeConfigs', 'InitProducerId']));
  });

  for (const entry of manifest) {
    describe(`${entry.file} (${entry.clientVersion}: ${entry.api} v${entry.apiVersion})`, () => {
      const frame = load(entry.file);

      it('decodes completely, with the header the client sent', () => {
        expect(frame.length).toBe(entry.bytes);
        const d = decodeOk(frame);
        expect(d.api.name).toBe(entry.api);
        expect(API_TABLE.some((a) => a.apiKey === entry.apiKey)).toBe(true);
        expect(d.trailingBytes, 'trailing bytes').toBe(0);
        expect({ apiKey: d.header.apiKey, apiVersion: d.header.apiVersion, clientId: d.header.clientId, correlationId: d.header.correlationId }).toEqual({
          apiKey: entry.apiKey,
          apiVersion: entry.apiVersion,
          ...entry.header,
        });
      });

      if (Object.keys(entry.expected).length > 0) {
        it(`carries what "${entry.step}" asked for`, () => {
          expect(project(decodeOk(frame))).toMatchObject(entry.expected);
        });
      }

      it('re-encodes (same version and header) to the identical bytes', () => {
        const d = decodeOk(frame);
        const again = encodeRequest(d.apiKey, d.apiVersion, d.header.correlationId, d.header.clientId, d.body as never);
        expect(again.readInt32BE(0)).toBe(frame.length);
        expect(again.subarray(4).toString('hex')).toBe(frame.toString('hex'));
      });
    });
  }
});
