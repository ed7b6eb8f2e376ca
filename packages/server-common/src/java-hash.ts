/**
 * Java's String.hashCode and Kafka's Utils.abs: together they map a group id or a transactional id
 * to its coordinator partition (`Utils.abs(id.hashCode) % partitions`), for `__consumer_offsets`
 * and `__transaction_state` alike.
 */

/** Java's String.hashCode: s[0]*31^(n-1) + … + s[n-1] over UTF-16 code units, in int32 arithmetic. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: Math.abs except Integer.MIN_VALUE, which maps to 0 (Math.abs would overflow). */
export function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}
