/**
 * How Kafka's tools print a failure: the Java exception class of an error code
 * (org.apache.kafka.common.errors.*) and `class: message` (Throwable.toString).
 */

// classes whose names do not follow the error name
const JAVA_EXCEPTIONS: Readonly<Record<string, string>> = {
  UNKNOWN_SERVER_ERROR: 'UnknownServerException',
  REQUEST_TIMED_OUT: 'TimeoutException',
  CORRUPT_MESSAGE: 'CorruptRecordException',
  CLUSTER_AUTHORIZATION_FAILED: 'ClusterAuthorizationException',
  TOPIC_AUTHORIZATION_FAILED: 'TopicAuthorizationException',
  GROUP_AUTHORIZATION_FAILED: 'GroupAuthorizationException',
  INVALID_TOPIC_EXCEPTION: 'InvalidTopicException',
  NETWORK_EXCEPTION: 'NetworkException',
  NON_EMPTY_GROUP: 'GroupNotEmptyException',
  INVALID_CONFIG: 'InvalidConfigurationException',
};

/** `org.apache.kafka.common.errors.PreferredLeaderNotAvailableException` for PREFERRED_LEADER_NOT_AVAILABLE, etc. */
export function javaExceptionName(errorName: string): string {
  const simple =
    JAVA_EXCEPTIONS[errorName] ??
    errorName
      .toLowerCase()
      .split('_')
      .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : w))
      .join('') + 'Exception';
  return `org.apache.kafka.common.errors.${simple}`;
}

/** What Kafka prints for a Throwable: `class: message`. */
export function javaToString(e: { errorName: string; message: string }): string {
  return `${javaExceptionName(e.errorName)}: ${e.message}`;
}
