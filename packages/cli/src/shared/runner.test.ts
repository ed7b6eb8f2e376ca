import { describe, expect, it } from 'vitest';
import { commandBuilder, groupBuilder, runCommand, type CommandIo } from './runner.js';

function capture(): { io: CommandIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { out: (s) => (out += s), err: (s) => (err += s) }, out: () => out, err: () => err };
}

const echo = commandBuilder(
  'echo',
  'prints its word',
  (cmd) => cmd.argument('<word>').argument('[times]').option('--upper', 'in capitals'),
  async (raw: { upper?: boolean }, io, _cmd, args) => {
    const [word, times] = args as [string, string | undefined];
    for (let i = 0; i < Number(times ?? 1); i++) io.out(`${raw.upper ? word.toUpperCase() : word}\n`);
    return word === 'fail' ? 3 : 0;
  },
);
const quiet = commandBuilder(
  'quiet',
  'sets no exit code',
  (cmd) => cmd,
  async () => undefined,
);
const group = groupBuilder('words', 'word commands', [echo, quiet]);

describe('runner', () => {
  it('runner – an action gets its positional arguments in order with the options', async () => {
    const c = capture();
    expect(await runCommand(echo, ['hi', '2', '--upper'], c.io)).toBe(0);
    expect(c.out()).toBe('HI\nHI\n');
  });

  it('runner – a group runs the named subcommand with the same io; its exit code is the command’s', async () => {
    const c = capture();
    expect(await runCommand(group, ['echo', 'fail'], c.io)).toBe(3);
    expect(c.out()).toBe('fail\n');
    expect(await runCommand(group, ['quiet'], capture().io)).toBe(0);
  });

  it('runner – a group without a subcommand prints its usage on stderr, exit 1; an unknown one is a command-line error', async () => {
    const none = capture();
    expect(await runCommand(group, [], none.io)).toBe(1);
    expect(none.err()).toMatch(/^Usage: words \[options\] \[command\]/);
    expect(none.err()).toContain('echo [options] <word> [times]');
    expect(none.out()).toBe('');
    const unknown = capture();
    expect(await runCommand(group, ['bogus'], unknown.io)).toBe(1);
    expect(unknown.err()).toBe("error: unknown command 'bogus'\n");
  });

  it('runner – a subcommand’s --help and its command-line errors go to the io, not the process', async () => {
    const help = capture();
    expect(await runCommand(group, ['echo', '--help'], help.io)).toBe(0);
    expect(help.out()).toMatch(/^Usage: words echo \[options\] <word> \[times\]/);
    const missing = capture();
    expect(await runCommand(group, ['echo'], missing.io)).toBe(1);
    expect(missing.err()).toBe("error: missing required argument 'word'\n");
  });
});
