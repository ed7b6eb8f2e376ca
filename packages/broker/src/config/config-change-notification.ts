import type { Logger } from 'pino';
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityChangeNotificationZNode,
  ConfigEntityTypeZNode,
  ConfigType,
  ZNodeDecodeError,
  type KafkaZk,
  type Unwatch,
} from '@samsa/zk-paths';

/** Kafka's ConfigEntityName.Default: the cluster-wide default broker entity, /config/brokers/<default>. */
export const DEFAULT_BROKER_ENTITY = '<default>';

/** Kafka's ZkNodeChangeNotificationListener purges notifications older than this (15 minutes). */
const NOTIFICATION_EXPIRY_MS = 15 * 60_000;

/** Applies one entity's whole config (its /config/<type>/<name> content) after a change. */
export type ConfigHandler = (entityName: string, config: Record<string, string>) => void | Promise<void>;

/** Per entity type; types without a handler are read and ignored (clients, users, ips: not yet). */
export type ConfigHandlers = Partial<Record<ConfigType, ConfigHandler>>;

/**
 * Kafka's DynamicConfigManager with its ZkNodeChangeNotificationListener on /config/changes: at
 * startup every existing topic config, the `<default>` broker config and this broker's config are
 * applied; then each new `config_change_<seq>` notification (`{"version":2,"entity_path":"topics/t"}`)
 * makes the entity's config re-read and handed to its type's handler. Notifications are processed
 * in sequence order, once each; those older than 15 minutes are deleted (by any broker, as Kafka).
 */
export class ConfigChangeNotificationHandler {
  private readonly log: Logger;
  private lastExecuted = -1;
  private watch: Unwatch | undefined;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly kzk: KafkaZk,
    private readonly brokerId: number,
    private readonly handlers: ConfigHandlers,
    logger: Logger,
  ) {
    this.log = logger.child({ component: 'config-change-notification' });
  }

  /** Applies the current configs, then starts watching /config/changes. */
  async startup(): Promise<void> {
    await this.kzk.zk.mkdirp(ConfigEntityChangeNotificationZNode.path);
    // notifications already there are covered by reading every config now
    const existing = await this.kzk.zk.getChildren(ConfigEntityChangeNotificationZNode.path).catch(() => [] as string[]);
    for (const c of existing) this.lastExecuted = Math.max(this.lastExecuted, seqOf(c));
    for (const type of Object.keys(this.handlers) as ConfigType[]) {
      const names =
        type === ConfigType.Broker
          ? [DEFAULT_BROKER_ENTITY, String(this.brokerId)]
          : await this.kzk.zk.getChildren(ConfigEntityTypeZNode.path(type)).catch(() => [] as string[]);
      for (const name of names) {
        await this.apply(type, name);
        // /config/users/<user>/clients/<client-id> (user and client-id quotas)
        if (type === ConfigType.User) {
          const clients = await this.kzk.zk.getChildren(`${ConfigEntityTypeZNode.path(type)}/${name}/clients`).catch(() => [] as string[]);
          for (const c of clients) await this.apply(type, `${name}/clients/${c}`);
        }
      }
    }
    this.watch = this.kzk.zk.watchChildren(ConfigEntityChangeNotificationZNode.path, (children) => {
      if (children) this.enqueue(children);
    });
  }

  shutdown(): void {
    this.stopped = true;
    this.watch?.();
  }

  /** Resolves once every notification seen so far has been applied (tests). */
  async idle(): Promise<void> {
    await this.chain;
  }

  private enqueue(children: string[]): void {
    this.chain = this.chain
      .then(() => this.process(children))
      .catch((err: unknown) => this.log.error({ err }, 'processing config change notifications failed'));
  }

  private async process(children: string[]): Promise<void> {
    const fresh = children.filter((c) => c.startsWith(ConfigEntityChangeNotificationSequenceZNode.prefix)).sort((a, b) => seqOf(a) - seqOf(b));
    for (const child of fresh) {
      if (this.stopped) return;
      const seq = seqOf(child);
      const path = `${ConfigEntityChangeNotificationZNode.path}/${child}`;
      const n = await this.kzk.zk.getOrNull(path);
      if (seq > this.lastExecuted) {
        this.lastExecuted = seq;
        if (n) {
          try {
            const { entityPath } = ConfigEntityChangeNotificationSequenceZNode.decode(n.data, path);
            const i = entityPath.indexOf('/');
            const type = entityPath.slice(0, i) as ConfigType;
            const name = entityPath.slice(i + 1);
            if (i <= 0 || !name) throw new ZNodeDecodeError(path, `malformed entity_path ${JSON.stringify(entityPath)}`);
            if (type !== ConfigType.Broker || name === DEFAULT_BROKER_ENTITY || name === String(this.brokerId)) await this.apply(type, name);
          } catch (err) {
            if (!(err instanceof ZNodeDecodeError)) throw err;
            this.log.warn({ path, err: err.message }, 'ignoring a malformed config change notification');
          }
        }
      }
      if (n && n.stat.ctime > 0 && Date.now() - n.stat.ctime > NOTIFICATION_EXPIRY_MS) await this.kzk.zk.delete(path).catch(() => undefined);
    }
  }

  private async apply(type: ConfigType, name: string): Promise<void> {
    const handler = this.handlers[type];
    if (!handler) return;
    const config = await this.kzk.getEntityConfig(type, name);
    this.log.info({ entityType: type, entityName: name, config: type === ConfigType.User ? withoutSecrets(config) : config }, 'applying dynamic config');
    await handler(name, config);
  }
}

/** A user's config as logged: SCRAM credentials (`SCRAM-SHA-256`, ...) hidden. */
function withoutSecrets(config: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, k.startsWith('SCRAM-') ? '[hidden]' : v]));
}

function seqOf(child: string): number {
  const n = Number(child.slice(ConfigEntityChangeNotificationSequenceZNode.prefix.length));
  return Number.isFinite(n) ? n : -1;
}
