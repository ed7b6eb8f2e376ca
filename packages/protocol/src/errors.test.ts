import { describe, expect, it } from 'vitest';
import { ErrorCode, KAFKA_ERRORS, KafkaError, errorByCode, errorCodeOf, errorName, isRetriable } from './errors.js';

describe('errors – table', () => {
  it('has the well-known codes', () => {
    expect(ErrorCode.NONE).toBe(0);
    expect(ErrorCode.UNKNOWN_SERVER_ERROR).toBe(-1);
    expect(ErrorCode.OFFSET_OUT_OF_RANGE).toBe(1);
    expect(ErrorCode.CORRUPT_MESSAGE).toBe(2);
    expect(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).toBe(3);
    expect(ErrorCode.NOT_LEADER_OR_FOLLOWER).toBe(6);
    expect(ErrorCode.MESSAGE_TOO_LARGE).toBe(10);
    expect(ErrorCode.RECORD_LIST_TOO_LARGE).toBe(18);
    expect(ErrorCode.INVALID_TIMESTAMP).toBe(32);
    expect(ErrorCode.UNSUPPORTED_VERSION).toBe(35);
    expect(ErrorCode.NOT_CONTROLLER).toBe(41);
    expect(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT).toBe(43);
    expect(ErrorCode.FENCED_LEADER_EPOCH).toBe(74);
    expect(ErrorCode.UNKNOWN_LEADER_EPOCH).toBe(75);
    expect(ErrorCode.STALE_BROKER_EPOCH).toBe(77);
    expect(ErrorCode.INVALID_RECORD).toBe(87);
    expect(ErrorCode.TRANSACTION_ABORTABLE).toBe(120);
  });

  it('covers every code from -1 to 120 exactly once', () => {
    const codes = Object.values(KAFKA_ERRORS)
      .map((e) => e.code)
      .sort((a, b) => a - b);
    expect(codes).toEqual(Array.from({ length: 122 }, (_, i) => i - 1));
  });

  it('looks up by code', () => {
    expect(errorByCode(2)?.name).toBe('CORRUPT_MESSAGE');
    expect(errorByCode(2)?.retriable).toBe(true);
    expect(errorByCode(9999)).toBeUndefined();
    expect(errorName(41)).toBe('NOT_CONTROLLER');
    expect(errorName(9999)).toBe('UNKNOWN(9999)');
    expect(isRetriable(6)).toBe(true);
    expect(isRetriable(10)).toBe(false);
    expect(isRetriable(12345)).toBe(false);
  });
});

describe('errors – KafkaError and errorCodeOf', () => {
  it('carries code, name, retriable and cause', () => {
    const cause = new Error('disk');
    const e = new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, 'boom', { cause });
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe(56);
    expect(e.errorName).toBe('KAFKA_STORAGE_ERROR');
    expect(e.retriable).toBe(true);
    expect(e.message).toBe('boom');
    expect(e.cause).toBe(cause);
    expect(e.name).toBe('KafkaError');
  });

  it('accepts a name and defaults the message', () => {
    const e = new KafkaError('INVALID_RECORD');
    expect(e.code).toBe(87);
    expect(e.message).toBe(KAFKA_ERRORS.INVALID_RECORD.message);
  });

  it('maps anything else to UNKNOWN_SERVER_ERROR', () => {
    expect(errorCodeOf(new KafkaError(3))).toBe(3);
    expect(errorCodeOf(new Error('x'))).toBe(-1);
    expect(errorCodeOf('string')).toBe(-1);
    expect(errorCodeOf(undefined)).toBe(-1);
    expect(errorCodeOf({ code: 5 })).toBe(-1);
  });
});
