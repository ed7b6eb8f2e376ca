/**
 * Producer id allocation in ZooKeeper mode (Kafka's ZkProducerIdManager): each broker claims blocks
 * of 1000 consecutive ids from `/latest_producer_id_block` and hands them out one by one. A block is
 * claimed by reading the znode, computing the block after the one recorded there (the first block
 * starts at 0) and writing it back conditionally on the zkVersion read; BAD_VERSION (another broker
 * claimed a block meanwhile) means read and try again. Claims are serialized per broker.
 */
import type { Logger } from 'pino';
import { KafkaError } from '@samsa/protocol';
import { ProducerIdBlockZNode, ZkCode, isZkError, type ProducerIdBlock, type ZkClient } from '@samsa/zk-paths';

export const PRODUCER_ID_BLOCK_SIZE = 1000n;
const MAX_LONG = 0x7fffffffffffffffn;

/** The ZooKeeper operations the manager uses (a ZkClient, or a fake in tests). */
export type ProducerIdZk = Pick<ZkClient, 'getOrNull' | 'set' | 'create'>;

export interface ProducerIdManagerOptions {
  brokerId: number;
  zk: ProducerIdZk;
  logger?: Logger | undefined;
  /** Give up claiming a block after this many lost races (default 100). */
  maxAttempts?: number;
}

export class ProducerIdManager {
  private next = 0n;
  /** Last id of the current block; below `next` when no block is held. */
  private last = -1n;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ProducerIdManagerOptions) {}

  /** The current block, if one was claimed. */
  get currentBlock(): { first: bigint; last: bigint } | null {
    return this.last >= 0n ? { first: this.last - PRODUCER_ID_BLOCK_SIZE + 1n, last: this.last } : null;
  }

  /**
   * The next producer id; claims a new block when the current one is used up. When no block can be
   * claimed (ZooKeeper trouble) it fails with the retriable COORDINATOR_LOAD_IN_PROGRESS (what
   * Kafka's KRaft-mode producer id manager answers then; its ZK mode answers UNKNOWN_SERVER_ERROR,
   * which clients treat as fatal).
   */
  generateProducerId(): Promise<bigint> {
    const run = this.chain.then(async () => {
      if (this.next > this.last) {
        let b: ProducerIdBlock;
        try {
          b = await this.claimBlock();
        } catch (err) {
          if (err instanceof KafkaError) throw err;
          this.o.logger?.warn({ err }, 'could not allocate a producer id block');
          throw new KafkaError('COORDINATOR_LOAD_IN_PROGRESS', 'Could not allocate a producer id block', { cause: err });
        }
        this.next = BigInt(b.blockStart);
        this.last = BigInt(b.blockEnd);
      }
      return this.next++;
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async claimBlock(): Promise<ProducerIdBlock> {
    const { zk, brokerId } = this.o;
    const path = ProducerIdBlockZNode.path;
    const attempts = this.o.maxAttempts ?? 100;
    for (let i = 0; i < attempts; i++) {
      const cur = await zk.getOrNull(path);
      const prev = cur ? ProducerIdBlockZNode.decode(cur.data) : null;
      let start = 0n;
      if (prev) {
        const prevEnd = BigInt(prev.blockEnd);
        if (prevEnd > MAX_LONG - PRODUCER_ID_BLOCK_SIZE) {
          this.o.logger?.fatal({ blockEnd: prev.blockEnd }, 'exhausted all producer ids');
          throw new KafkaError('UNKNOWN_SERVER_ERROR', 'Have exhausted all producerIds.');
        }
        start = prevEnd + 1n;
      }
      const block: ProducerIdBlock = { brokerId, blockStart: start.toString(), blockEnd: (start + PRODUCER_ID_BLOCK_SIZE - 1n).toString() };
      const data = ProducerIdBlockZNode.encode(block);
      try {
        if (cur) await zk.set(path, data, cur.stat.version);
        else await zk.create(path, data, { mkdirp: true });
        this.o.logger?.info({ brokerId, blockStart: block.blockStart, blockEnd: block.blockEnd, attempt: i + 1 }, 'acquired a new producer id block');
        return block;
      } catch (err) {
        if (isZkError(err, ZkCode.BAD_VERSION) || isZkError(err, ZkCode.NODE_EXISTS) || isZkError(err, ZkCode.NO_NODE)) {
          this.o.logger?.debug({ attempt: i + 1 }, 'lost a race for the producer id block; retrying');
          continue;
        }
        throw err;
      }
    }
    throw new Error(`could not claim a producer id block after ${attempts} attempts`);
  }
}
