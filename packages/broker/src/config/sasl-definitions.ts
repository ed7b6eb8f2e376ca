/**
 * SASL broker configs (Kafka's `sasl.*`), spread into BROKER_CONFIGS. Each may also be set per
 * listener (`listener.name.<listener>.`) and, for `sasl.jaas.config`, per listener and mechanism
 * (`listener.name.<listener>.<mechanism>.`; BrokerConfig.forListener).
 */
import type { ConfigDef } from './types.js';

export const SASL_CONFIGS = {} as const satisfies Record<string, ConfigDef>;
