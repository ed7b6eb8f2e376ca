/**
 * Kafka's Heartbeat bookkeeping plus the timer that replaces the Java client's heartbeat thread:
 * a heartbeat every heartbeat.interval.ms while the member is in a stable generation, the session
 * considered lost when no heartbeat succeeded within session.timeout.ms (coordinator marked
 * unknown), and the poll timeout — no poll() within max.poll.interval.ms — after which the member
 * leaves the group so its partitions go to others.
 */
export interface HeartbeatTimerActions {
  /** Whether heartbeats should be sent now (stable generation, coordinator known). */
  active(): boolean;
  /** Sends one Heartbeat; resolves when it is answered (or failed). */
  sendHeartbeat(): Promise<void>;
  /** No successful heartbeat within session.timeout.ms. */
  onSessionTimeout(): void;
  /** No poll() within max.poll.interval.ms. */
  onPollTimeout(): void;
}

export class Heartbeat {
  lastPoll = Date.now();
  lastHeartbeatSend = 0;
  lastHeartbeatReceive = Date.now();
  heartbeatInFlight = false;

  constructor(
    readonly heartbeatIntervalMs: number,
    readonly sessionTimeoutMs: number,
    readonly maxPollIntervalMs: number,
  ) {}

  poll(now = Date.now()): void {
    this.lastPoll = now;
  }

  sentHeartbeat(now = Date.now()): void {
    this.lastHeartbeatSend = now;
    this.heartbeatInFlight = true;
  }

  receivedHeartbeat(now = Date.now()): void {
    this.lastHeartbeatReceive = now;
    this.heartbeatInFlight = false;
  }

  failedHeartbeat(): void {
    this.heartbeatInFlight = false;
  }

  /** A new generation / coordinator: the session starts now. */
  resetSession(now = Date.now()): void {
    this.lastHeartbeatReceive = now;
    this.lastHeartbeatSend = now;
  }

  timeToNextHeartbeat(now = Date.now()): number {
    return Math.max(0, this.lastHeartbeatSend + this.heartbeatIntervalMs - now);
  }

  sessionTimeoutExpired(now = Date.now()): boolean {
    return now - this.lastHeartbeatReceive > this.sessionTimeoutMs;
  }

  pollTimeoutExpired(now = Date.now()): boolean {
    return now - this.lastPoll > this.maxPollIntervalMs;
  }

  timeToPollTimeout(now = Date.now()): number {
    return Math.max(0, this.lastPoll + this.maxPollIntervalMs - now);
  }
}

/** Runs the heartbeat checks on a timer of its own, independent of poll(). */
export class HeartbeatTimer {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly hb: Heartbeat,
    private readonly actions: HeartbeatTimerActions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Re-evaluates at once (after a poll or a state change). */
  kick(): void {
    if (this.running) this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (!this.running) return;
    const now = Date.now();
    if (!this.actions.active()) {
      this.schedule(Math.min(this.hb.heartbeatIntervalMs, 100));
      return;
    }
    if (this.hb.pollTimeoutExpired(now)) {
      this.actions.onPollTimeout();
      this.schedule(this.hb.heartbeatIntervalMs);
      return;
    }
    if (this.hb.sessionTimeoutExpired(now)) {
      this.actions.onSessionTimeout();
      this.schedule(Math.min(this.hb.heartbeatIntervalMs, 100));
      return;
    }
    if (!this.hb.heartbeatInFlight && this.hb.timeToNextHeartbeat(now) === 0) {
      this.hb.sentHeartbeat(now);
      await this.actions.sendHeartbeat().catch(() => undefined);
      if (!this.running) return;
    }
    const t = Date.now();
    this.schedule(Math.max(5, Math.min(this.hb.timeToNextHeartbeat(t) || this.hb.heartbeatIntervalMs, this.hb.timeToPollTimeout(t) + 1)));
  }
}
