/**
 * What the Produce and Fetch handlers report (Kafka's BrokerTopicMetrics): once per partition
 * append or per partition read, with the totals the batch headers / read slices already carry.
 */
export interface TopicMetricsSink {
  /** Bytes and records appended to `topic` by one partition append of a Produce request. */
  produced(topic: string, bytes: number, records: number): void;
  /** Record bytes of `topic` sent by one partition of a Fetch response. */
  fetched(topic: string, bytes: number, follower: boolean): void;
}
