/**
 * Runs `fn` over `items` with at most `limit` calls in flight (Kafka runs such work on a fixed
 * thread pool, e.g. num.recovery.threads.per.data.dir): for per-partition work whose awaits are
 * I/O (fsync, file creation), so that thousands of partitions do not wait for each other one by
 * one, without opening thousands of files at once. Resolves when every call settled; rejects with
 * the first error after all settled. Items are started in order.
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  if (!(limit >= 1)) throw new RangeError(`forEachBounded: limit must be at least 1, got ${limit}`);
  let next = 0;
  let firstError: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        await fn(items[i]!, i);
      } catch (err) {
        firstError ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (firstError) throw firstError.err;
}
