import { describe, expect, it } from 'vitest';
import {
  ConsumerGroupsUsageError,
  parseDateTime,
  parseDuration,
  parseGroupStates,
  validateConsumerGroupsOptions,
  type RawConsumerGroupsOptions,
} from './consumer-groups-options.js';

const bs = { bootstrapServer: 'localhost:9092' };
const fails = (o: RawConsumerGroupsOptions) => {
  try {
    validateConsumerGroupsOptions(o);
  } catch (e) {
    if (e instanceof ConsumerGroupsUsageError) return e.message;
    throw e;
  }
  throw new Error('expected a usage error');
};

describe('consumer-groups options', () => {
  it('consumer-groups options – exactly one action, --bootstrap-server required', () => {
    expect(fails({ list: true })).toBe('Missing required argument "[bootstrap-server]"');
    expect(fails({ ...bs })).toBe('Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets');
    expect(fails({ ...bs, list: true, describe: true, group: ['g'] })).toMatch(/^Command must include exactly one action/);
    expect(validateConsumerGroupsOptions({ ...bs, list: true })).toMatchObject({ action: 'list', listStates: null, timeoutMs: 5000 });
  });

  it('consumer-groups options – --describe needs --group or --all-groups and at most one of --members/--offsets/--state (no value)', () => {
    expect(fails({ ...bs, describe: true })).toBe('Option [describe] takes one of these options: [all-groups], [group]');
    expect(fails({ ...bs, describe: true, group: ['g'], members: true, state: true })).toBe(
      'Option [describe] takes at most one of these options: [members], [offsets], [state]',
    );
    expect(fails({ ...bs, describe: true, group: ['g'], state: 'stable' })).toBe('Option [describe] does not take a value for [state]');
    expect(fails({ ...bs, describe: true, group: ['g'], allGroups: true })).toBe('Option "[group]" can\'t be used with option "[all-groups]"');
    expect(fails({ ...bs, describe: true, group: ['g'], topic: ['t'] })).toBe('Option "[topic]" can\'t be used with option "[describe]"');
    expect(fails({ ...bs, list: true, members: true })).toMatch(/^Option members is unavailable/);
    expect(validateConsumerGroupsOptions({ ...bs, describe: true, group: ['a', 'b', 'a'] })).toMatchObject({ view: 'offsets', groups: ['a', 'b'] });
    expect(validateConsumerGroupsOptions({ ...bs, describe: true, allGroups: true, members: true, verbose: true })).toMatchObject({
      view: 'members',
      verbose: true,
      allGroups: true,
    });
    expect(validateConsumerGroupsOptions({ ...bs, describe: true, group: ['g'], state: true }).view).toBe('state');
  });

  it('consumer-groups options – --list --state: without a value all states, with one a case-insensitive filter; invalid names rejected', () => {
    expect(validateConsumerGroupsOptions({ ...bs, list: true, state: true }).listStates).toEqual([]);
    expect(validateConsumerGroupsOptions({ ...bs, list: true, state: 'stable, EMPTY' }).listStates).toEqual(['Stable', 'Empty']);
    expect(() => parseGroupStates('stable,bogus')).toThrow(
      "Invalid state list 'stable,bogus'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty",
    );
    expect(fails({ ...bs, list: true, group: ['g'] })).toBe('Option "[group]" can\'t be used with option "[list]"');
  });

  it('consumer-groups options – --delete and --delete-offsets scopes', () => {
    expect(fails({ ...bs, delete: true })).toBe('Option [delete] takes one of these options: [all-groups], [group]');
    expect(fails({ ...bs, delete: true, group: ['g'], topic: ['t'] })).toBe(
      'The consumer does not support topic-specific offset deletion from a consumer group.',
    );
    expect(fails({ ...bs, deleteOffsets: true, group: ['g'] })).toBe('Option [delete-offsets] takes the following options: [group], [topic]');
    expect(validateConsumerGroupsOptions({ ...bs, deleteOffsets: true, group: ['g'], topic: ['t:0,1', 'u'] })).toMatchObject({
      action: 'delete-offsets',
      topics: ['t:0,1', 'u'],
    });
  });

  it('consumer-groups options – --reset-offsets: one scenario, one scope, --dry-run xor --execute (neither: warn, dry run); values converted', () => {
    const base = { ...bs, resetOffsets: true, group: ['g'] };
    expect(fails({ ...base, allTopics: true })).toMatch(/^Option '\[reset-offsets\]' requires one of the following scenarios: \[to-offset, to-datetime/);
    expect(fails({ ...base, allTopics: true, toEarliest: true, shiftBy: '1' })).toBe('Option "[to-earliest]" can\'t be used with option "[shift-by]"');
    expect(fails({ ...base, toEarliest: true })).toBe('One of the reset scopes should be defined: --all-topics, --topic.');
    expect(fails({ ...base, allTopics: true, toLatest: true, dryRun: true, execute: true })).toBe(
      'Option [reset-offsets] only accepts one of [execute] and [dry-run]',
    );
    expect(fails({ ...base, allTopics: true, toOffset: 'x' })).toBe("Cannot parse argument 'x' of option to-offset");
    expect(fails({ ...bs, resetOffsets: true, allTopics: true, toLatest: true })).toBe(
      'Option [reset-offsets] takes one of these options: [all-groups], [group]',
    );
    expect(fails({ ...bs, list: true, execute: true })).toBe('Option "[execute]" can\'t be used with option "[list]"');
    expect(validateConsumerGroupsOptions({ ...base, topic: ['t'], shiftBy: '-5' })).toMatchObject({
      scenario: { kind: 'shift-by', shift: -5n },
      execute: false,
      warnNoExecute: true,
    });
    expect(validateConsumerGroupsOptions({ ...base, allTopics: true, toOffset: '9007199254740993', execute: true })).toMatchObject({
      scenario: { kind: 'to-offset', offset: 9007199254740993n },
      execute: true,
      warnNoExecute: false,
    });
    expect(validateConsumerGroupsOptions({ ...base, allTopics: true, toCurrent: true, dryRun: true })).toMatchObject({
      scenario: { kind: 'to-current' },
      warnNoExecute: false,
    });
    expect(validateConsumerGroupsOptions({ ...base, allTopics: true, byDuration: 'PT1H' }).scenario).toEqual({ kind: 'by-duration', durationMs: 3_600_000 });
    // --from-file needs no scope
    expect(validateConsumerGroupsOptions({ ...base, fromFile: 'plan.csv' }).scenario).toEqual({ kind: 'from-file', path: 'plan.csv' });
  });

  it('consumer-groups options – --to-datetime as Utils.getDateTime: UTC by default, zones, strict', () => {
    expect(parseDateTime('2024-03-01T12:30:00.250')).toBe(Date.UTC(2024, 2, 1, 12, 30, 0, 250));
    expect(parseDateTime('2024-03-01T12:30:00.000Z')).toBe(Date.UTC(2024, 2, 1, 12, 30));
    expect(parseDateTime('2024-03-01T12:30:00.000+02:00')).toBe(Date.UTC(2024, 2, 1, 10, 30));
    expect(parseDateTime('2024-03-01T12:30:00.000-0130')).toBe(Date.UTC(2024, 2, 1, 14, 0));
    expect(() => parseDateTime('2024-03-01')).toThrow("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format");
    expect(() => parseDateTime('2024-02-30T00:00:00.000')).toThrow('Unparseable date: "2024-02-30T00:00:00.000Z"');
    expect(() => parseDateTime('2024-03-01T12:30:00')).toThrow(/^Unparseable date/);
  });

  it('consumer-groups options – --by-duration as java.time.Duration.parse', () => {
    expect(parseDuration('P1DT2H3M4S')).toBe(86_400_000 + 7_200_000 + 180_000 + 4000);
    expect(parseDuration('PT0.5S')).toBe(500);
    expect(parseDuration('pt10m')).toBe(600_000);
    expect(parseDuration('-PT1S')).toBe(-1000);
    expect(parseDuration('P2D')).toBe(172_800_000);
    for (const bad of ['P', 'PT', '1H', 'P1H', 'PT1D']) expect(() => parseDuration(bad)).toThrow('Text cannot be parsed to a Duration');
  });
});
