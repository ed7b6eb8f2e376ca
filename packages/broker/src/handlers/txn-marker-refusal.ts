/**
 * Test-only fault: SAMSA_TEST_REFUSE_TXN_MARKERS=<topic>[:<count>][,<topic>[:<count>]...] in a
 * broker's environment makes it, as a partition leader, refuse WriteTxnMarkers for the named topics'
 * partitions with UNSUPPORTED_FOR_MESSAGE_FORMAT — what Kafka's leader answers for a partition whose
 * message format predates transactions — the first <count> times per topic (every time without a
 * count). A transaction coordinator drops a partition answered so from the transaction's pending
 * markers (Kafka's rule), so the transaction completes while that partition keeps an open
 * transaction: the hanging transaction `samsa transactions find-hanging` looks for
 * (test-e2e/transactions-cli.test.ts). Never set outside tests.
 */
export const TXN_MARKER_REFUSAL_ENV = 'SAMSA_TEST_REFUSE_TXN_MARKERS';

export class TxnMarkerRefusal {
  /** Topic → markers still to refuse (Infinity: all). */
  private readonly remaining: Map<string, number>;

  private constructor(remaining: Map<string, number>) {
    this.remaining = remaining;
  }

  /** The refusal the variable's value describes; undefined when it is unset or empty. Throws on a malformed value. */
  static parse(value: string | undefined): TxnMarkerRefusal | undefined {
    if (value === undefined || value.trim() === '') return undefined;
    const remaining = new Map<string, number>();
    for (const entry of value.split(',')) {
      const m = /^\s*([A-Za-z0-9._-]+)(?::(\d+))?\s*$/.exec(entry);
      if (!m) throw new Error(`${TXN_MARKER_REFUSAL_ENV}: expected <topic>[:<count>] entries separated by commas, got '${entry}'`);
      remaining.set(m[1]!, m[2] === undefined ? Infinity : Number(m[2]));
    }
    return new TxnMarkerRefusal(remaining);
  }

  /** The topics named, for the warning logged at startup. */
  get topics(): string[] {
    return [...this.remaining.keys()];
  }

  /** True when this marker write to a partition of `topic` is to be refused (counts it). */
  refuse(topic: string): boolean {
    const left = this.remaining.get(topic);
    if (left === undefined || left <= 0) return false;
    this.remaining.set(topic, left - 1);
    return true;
  }
}
