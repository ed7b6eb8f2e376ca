/**
 * What the producer's and the consumer's interceptor chains share: interceptors run in order, and
 * one that throws is reported through `onError` and skipped, as in Kafka. The chains are only
 * consulted when not `empty`, so the closures below never reach a path without interceptors.
 */
export abstract class InterceptorChainBase<I extends { close?(): void }> {
  constructor(
    protected readonly interceptors: readonly I[],
    private readonly onError: (err: unknown, phase: string) => void,
  ) {}

  get empty(): boolean {
    return this.interceptors.length === 0;
  }

  /** Passes `value` through each interceptor's `step` in order; a throwing one leaves it as it was. */
  protected pipe<T>(value: T, phase: string, step: (i: I, v: T) => T): T {
    let r = value;
    for (const i of this.interceptors) {
      try {
        r = step(i, r);
      } catch (err) {
        this.onError(err, phase);
      }
    }
    return r;
  }

  /** Calls `call` on each interceptor in order; one that throws is reported and the rest still run. */
  protected each(phase: string, call: (i: I) => void): void {
    for (const i of this.interceptors) {
      try {
        call(i);
      } catch (err) {
        this.onError(err, phase);
      }
    }
  }

  close(): void {
    this.each('close', (i) => i.close?.());
  }
}
