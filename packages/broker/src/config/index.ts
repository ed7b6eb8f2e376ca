export { ConfigError } from './errors.js';
export { CONFIG_TYPE_CODES, ConfigSource, ConfigType, Importance, SamsaNote, UpdateMode } from './types.js';
export type { AnyConfigValue, ConfigDef, ConfigSourceName, TopicConfigDef, ValueSpec } from './types.js';
export { LONG_MAX, Password, formatValue, parseValue } from './values.js';
export type { ValueOfDef, ValueOfType } from './values.js';
export {
  BROKER_CONFIGS,
  BROKER_CONFIG_NAMES,
  CLEANUP_POLICIES,
  COMPRESSION_TYPES,
  MIN_SEGMENT_BYTES,
  SECURITY_PROTOCOLS,
  SecurityProtocol,
  TIMESTAMP_TYPES,
  brokerConfigDef,
  brokerConfigSynonyms,
  isBrokerConfigName,
} from './definitions.js';
export type { BrokerConfigDefs, BrokerConfigName, BrokerConfigValue } from './definitions.js';
export { formatEndpoint, parseListeners, parseSecurityProtocolMap } from './listeners.js';
export type { ListenerEndpoint, ParseListenersOptions } from './listeners.js';
export { ENV_PREFIX, describeOrigin, envVariableFor, parseOverride } from './sources.js';
export type { ConfigOrigin, RawSetting } from './sources.js';
export type { ResolvedBrokerConfig, ZookeeperSettings } from './validate.js';
export type { ConfigDescription, ConfigSynonym, DescribableBrokerConfig } from './describe.js';
export { BrokerConfig, buildBrokerConfig, generatedBrokerId, loadBrokerConfig, unknownConfigWarning } from './broker-config.js';
export type { BrokerConfigInput, LoadBrokerConfigOptions } from './broker-config.js';
export {
  TOPIC_CONFIGS,
  TOPIC_CONFIG_NAMES,
  TOPIC_CONFIG_SYNONYMS,
  brokerSynonymOf,
  describeTopicConfigs,
  effectiveTopicConfig,
  isTopicConfigName,
  parseTopicConfigs,
} from './topic-config.js';
export type { TopicConfigDefs, TopicConfigName, TopicConfigOverrides, TopicConfigSynonym, TopicConfigValue, TopicConfigValues } from './topic-config.js';
