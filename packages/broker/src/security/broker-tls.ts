/**
 * A broker's TLS contexts, built once at startup from its config (so a missing or unreadable
 * key/trust store stops the broker with a ConfigError naming the key): the server side of every
 * SSL / SASL_SSL listener (control plane included), and the client side towards the inter-broker
 * listener (replica fetchers, transaction markers) and towards the control-plane listener (the
 * controller's channel, ControlledShutdown), each from that listener's `ssl.*` settings.
 */
import type { ConnectionOptions } from 'node:tls';
import type { BrokerConfig } from '../config/broker-config.js';
import { clientTls, serverTls, usesTls, type ServerTls } from './ssl-factory.js';

export interface BrokerTls {
  /** By listener name: the listeners that serve TLS. */
  readonly servers: ReadonlyMap<string, ServerTls>;
  /** Client side towards the inter-broker listener, when it is SSL / SASL_SSL. */
  readonly interBroker: ConnectionOptions | undefined;
  /**
   * Client side towards the control-plane listener, used for a peer whose registered control-plane
   * endpoint is SSL / SASL_SSL: from the listener's ssl.* settings when this broker's own
   * control-plane listener serves TLS, else Node's defaults (its root CAs, host-name check).
   */
  readonly controlPlane: ConnectionOptions;
}

export function brokerTls(
  cfg: Pick<
    BrokerConfig,
    'listeners' | 'controlPlaneListener' | 'interBrokerListenerName' | 'interBrokerSecurityProtocol' | 'controlPlaneListenerName' | 'forListener'
  >,
): BrokerTls {
  const servers = new Map<string, ServerTls>();
  for (const l of cfg.listeners) if (usesTls(l.securityProtocol)) servers.set(l.listenerName, serverTls(cfg, l.listenerName));
  return {
    servers,
    interBroker: usesTls(cfg.interBrokerSecurityProtocol) ? clientTls(cfg, cfg.interBrokerListenerName) : undefined,
    controlPlane: usesTls(cfg.controlPlaneListener.securityProtocol) ? clientTls(cfg, cfg.controlPlaneListenerName) : {},
  };
}
