/**
 * Kafka's inter-broker protocol versions (`MetadataVersion`, formerly `ApiVersion`), as
 * `inter.broker.protocol.version` and `log.message.format.version` name them: "2.0", "2.0-IV1",
 * "0.10.1", "0.10.1-IV2", … up to 3.8 (Kafka 3.8's latest production version). Samsa uses them
 * for what older brokers and tools read: the record versions of `__consumer_offsets` and the
 * message.format.version a topic reports.
 */

/** One protocol version: its release ("2.1") and internal version ("IV0", or "" before 0.10). */
export interface MetadataVersion {
  /** Position in Kafka's ordering (comparisons only). */
  readonly ordinal: number;
  readonly release: string;
  readonly subVersion: string;
  /** "2.1-IV0", or the release alone when there is no internal version ("0.9.0"). */
  readonly version: string;
}

const RELEASES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['0.8.0', ['']],
  ['0.8.1', ['']],
  ['0.8.2', ['']],
  ['0.9.0', ['']],
  ['0.10.0', ['IV0', 'IV1']],
  ['0.10.1', ['IV0', 'IV1', 'IV2']],
  ['0.10.2', ['IV0']],
  ['0.11.0', ['IV0', 'IV1', 'IV2']],
  ['1.0', ['IV0']],
  ['1.1', ['IV0']],
  ['2.0', ['IV0', 'IV1']],
  ['2.1', ['IV0', 'IV1', 'IV2']],
  ['2.2', ['IV0', 'IV1']],
  ['2.3', ['IV0', 'IV1']],
  ['2.4', ['IV0', 'IV1']],
  ['2.5', ['IV0']],
  ['2.6', ['IV0']],
  ['2.7', ['IV0', 'IV1', 'IV2']],
  ['2.8', ['IV0', 'IV1']],
  ['3.0', ['IV0', 'IV1']],
  ['3.1', ['IV0']],
  ['3.2', ['IV0']],
  ['3.3', ['IV0', 'IV1', 'IV2', 'IV3']],
  ['3.4', ['IV0']],
  ['3.5', ['IV0', 'IV1', 'IV2']],
  ['3.6', ['IV0', 'IV1', 'IV2']],
  ['3.7', ['IV0', 'IV1', 'IV2', 'IV3', 'IV4']],
  ['3.8', ['IV0']],
];

/** Every version, oldest first. */
export const METADATA_VERSIONS: readonly MetadataVersion[] = Object.freeze(
  RELEASES.flatMap(([release, subs]) =>
    subs.map((subVersion) => ({ release, subVersion, version: subVersion === '' ? release : `${release}-${subVersion}` })),
  ).map((v, ordinal) => Object.freeze({ ...v, ordinal })),
);

/** Full versions and bare releases (a release means its latest internal version). */
const BY_NAME: ReadonlyMap<string, MetadataVersion> = new Map(
  METADATA_VERSIONS.flatMap(
    (v) =>
      [
        [v.version, v],
        [v.release, v],
      ] as const,
  ),
);

function named(version: string): MetadataVersion {
  const v = BY_NAME.get(version);
  if (!v) throw new Error(`unknown metadata version ${version}`);
  return v;
}

export const IBP_0_10_0_IV0 = named('0.10.0-IV0');
export const IBP_0_10_1_IV0 = named('0.10.1-IV0');
export const IBP_0_11_0_IV0 = named('0.11.0-IV0');
export const IBP_2_1_IV0 = named('2.1-IV0');
export const IBP_2_1_IV1 = named('2.1-IV1');
export const IBP_2_3_IV0 = named('2.3-IV0');
export const IBP_3_0_IV0 = named('3.0-IV0');
export const IBP_3_0_IV1 = named('3.0-IV1');
/** inter.broker.protocol.version's default (Kafka 3.8's latest production version). */
export const LATEST_METADATA_VERSION = METADATA_VERSIONS[METADATA_VERSIONS.length - 1]!;

/**
 * Kafka's `MetadataVersion.fromVersionString`: the first three dot-separated parts of a "0.x"
 * version and the first two of later ones count ("2.0.1" is 2.0, "0.10.1.1" is 0.10.1); a
 * release without internal version means its latest. Null when not a version.
 */
export function parseMetadataVersion(value: string): MetadataVersion | null {
  const parts = value.split('.');
  const n = value.startsWith('0.') ? 3 : 2;
  const key = n >= parts.length ? value : parts.slice(0, n).join('.');
  return BY_NAME.get(key) ?? null;
}

export function isLessThan(a: MetadataVersion, b: MetadataVersion): boolean {
  return a.ordinal < b.ordinal;
}

/** Highest record (message format) version: 0 before 0.10.0, 1 before 0.11.0, else 2. */
export function highestSupportedRecordVersion(v: MetadataVersion): 0 | 1 | 2 {
  return isLessThan(v, IBP_0_10_0_IV0) ? 0 : isLessThan(v, IBP_0_11_0_IV0) ? 1 : 2;
}

/** The first version that supports record version `r` (Kafka's minSupportedFor), as its release. */
export function minReleaseForRecordVersion(r: 0 | 1 | 2): string {
  return r === 0 ? '0.8.0' : r === 1 ? '0.10.0' : '0.11.0';
}

/** From 3.0 on message.format.version is ignored (KIP-724): topics report 3.0-IV1. */
export function shouldIgnoreMessageFormatVersion(ibp: MetadataVersion): boolean {
  return !isLessThan(ibp, IBP_3_0_IV0);
}

/**
 * GroupMetadataValue version Kafka's GroupMetadataManager writes under `ibp`: 0 before 0.10.1,
 * 1 before 2.1, 2 before 2.3, else 3 (the highest non-flexible version).
 */
export function groupMetadataValueVersion(ibp: MetadataVersion): 0 | 1 | 2 | 3 {
  if (isLessThan(ibp, IBP_0_10_1_IV0)) return 0;
  if (isLessThan(ibp, IBP_2_1_IV0)) return 1;
  if (isLessThan(ibp, IBP_2_3_IV0)) return 2;
  return 3;
}

/**
 * OffsetCommitValue version Kafka writes under `ibp`: 1 before 2.1 or when the commit carries an
 * explicit expire timestamp, 2 before 2.1-IV1, else 3.
 */
export function offsetCommitValueVersion(ibp: MetadataVersion, hasExpireTimestamp: boolean): 1 | 2 | 3 {
  if (isLessThan(ibp, IBP_2_1_IV0) || hasExpireTimestamp) return 1;
  if (isLessThan(ibp, IBP_2_1_IV1)) return 2;
  return 3;
}
