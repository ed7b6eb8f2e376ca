/**
 * A configuration problem found while reading or validating broker (or topic) configuration.
 *
 * `key` names the configuration concerned (`undefined` only for syntax errors in a properties file
 * before a key could be read). The message always names the key, the offending value and what is
 * allowed, and says where the value came from (file and line, environment variable, --override).
 */
export class ConfigError extends Error {
  constructor(
    readonly key: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ConfigError';
  }
}
