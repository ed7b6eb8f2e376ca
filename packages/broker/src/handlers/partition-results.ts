/**
 * Per-partition error codes of a request's answer, grouped by topic in the order they were first
 * set (the shape of OffsetCommit, TxnOffsetCommit and AddPartitionsToTxn responses).
 */
export class PartitionErrors {
  private readonly byTopic = new Map<string, Map<number, number>>();

  set(topic: string, partition: number, code: number): void {
    let m = this.byTopic.get(topic);
    if (!m) {
      m = new Map();
      this.byTopic.set(topic, m);
    }
    m.set(partition, code);
  }

  /** `{ name, partitions: [{ partitionIndex, errorCode }] }` per topic. */
  topics(): Array<{ name: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }> {
    return [...this.byTopic].map(([name, m]) => ({ name, partitions: [...m].map(([partitionIndex, errorCode]) => ({ partitionIndex, errorCode })) }));
  }
}
