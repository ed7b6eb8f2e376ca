/**
 * The one runner of the samsa commands. Each command is built by a `CommandBuilder`: given where it
 * writes (`CommandIo`) and how its exit code is reported, it returns the commander `Command`. The
 * same builder then runs in two ways:
 *
 * - `registerCommand`: under `samsa` (main.ts), writing to the process's stdout/stderr, the exit
 *   code through `process.exitCode` (so pending output is flushed before the process ends);
 * - `runCommand`: in tests and embedders, with the argv after the command's name, writing to the
 *   given io; resolves with the exit code (commander's own for --help and parse errors).
 *
 * An action resolves with its exit code (Kafka's tools: 0 success, 1 usage or command error), or
 * with nothing for the long-running commands that keep the process alive and set no code. A
 * command with subcommands (`samsa cluster up|down|status`) is a `groupBuilder` of such builders.
 */
import { Command, CommanderError } from 'commander';

/** Where a command writes (raw strings, newlines included) and reads. */
export interface CommandIo {
  out: (s: string) => void;
  err: (s: string) => void;
  /** True when `out` is a terminal (progress bars redraw one line). */
  isTty?: boolean;
  /** Resolves once `out` takes more (a pipe whose reader lags holds the writer back). Default: at once. */
  outDrained?: () => Promise<void>;
  /** What the command reads (console-producer's lines). Default: the process's stdin. */
  input?: NodeJS.ReadableStream;
}

/** The process's stdin, stdout and stderr. */
export function processIo(): CommandIo {
  return {
    out: (s) => void process.stdout.write(s),
    err: (s) => void process.stderr.write(s),
    isTty: process.stdout.isTTY === true,
    outDrained: () => (process.stdout.writableNeedDrain ? new Promise<void>((r) => process.stdout.once('drain', () => r())) : Promise.resolve()),
    input: process.stdin,
  };
}

/** `io.out` a line at a time. */
export function printer(io: CommandIo): (line: string) => void {
  return (line) => io.out(`${line}\n`);
}

/**
 * A command's action: commander's option values, where it writes, the command, and its positional
 * arguments (those declared with `.argument()`, in order); resolves with the exit code, or with
 * nothing to leave it as it is.
 */
export type CommandAction<Raw> = (raw: Raw, io: CommandIo, cmd: Command, args: readonly unknown[]) => Promise<number | void>;

/** Builds a command writing to `io` whose action reports its exit code through `setExitCode`. */
export type CommandBuilder = (io: CommandIo, setExitCode: (code: number) => void) => Command;

/**
 * The builder of a command with one action: `name` and `description` as `samsa --help` shows them,
 * `defineOptions` adds the flags, `action` receives commander's option values.
 */
export function commandBuilder<Raw>(name: string, description: string, defineOptions: (cmd: Command) => unknown, action: CommandAction<Raw>): CommandBuilder {
  return (io, setExitCode) => {
    const cmd = new Command(name).description(description);
    defineOptions(cmd);
    cmd.action(async () => {
      const code = await action(cmd.opts() as Raw, io, cmd, cmd.processedArgs as unknown[]);
      if (code !== undefined) setExitCode(code);
    });
    return cmd;
  };
}

/**
 * The builder of a command made of subcommands (`samsa cluster up`), each built by its own
 * builder with the same io and exit code. Without a subcommand, commander prints the group's
 * usage on stderr and exits 1; an unknown one is a command-line error (exit 1).
 */
export function groupBuilder(name: string, description: string, subcommands: readonly CommandBuilder[]): CommandBuilder {
  return (io, setExitCode) => {
    const group = new Command(name).description(description);
    for (const sub of subcommands) group.addCommand(sub(io, setExitCode));
    return group;
  };
}

/** `cmd` and its subcommands, all levels. */
function commandTree(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(commandTree)];
}

/**
 * Runs a command on `argv` (the words after its name) writing to `io`; resolves with the exit code:
 * the action's, or commander's for --help (0) and command-line errors (1, message on `io.err`).
 */
export async function runCommand(build: CommandBuilder, argv: readonly string[], io: CommandIo): Promise<number> {
  let code = 0;
  const cmd = build(io, (c) => (code = c));
  // subcommands added with addCommand do not inherit these: every level reports to `io`
  for (const c of commandTree(cmd)) c.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  try {
    await cmd.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    throw err;
  }
  return code;
}

/** Adds a command to `samsa`: the process's streams, the exit code through process.exitCode. */
export function registerCommand(program: Command, build: CommandBuilder, io: CommandIo = processIo()): void {
  program.addCommand(build(io, (code) => (process.exitCode = code)));
}

/** Whether commander collected no option at all (Kafka's tools then print their usage and exit 1). */
export function noOptionsGiven(raw: object): boolean {
  return Object.values(raw).every((v) => v === undefined || v === false);
}

/**
 * CommandLineUtils.printUsageAndExit (no arguments): the tool's description and its usage on
 * stderr, exit code 1.
 */
export function printUsage(io: CommandIo, description: string, cmd: Command | undefined): number {
  io.err(`${description}\n`);
  if (cmd) io.err(cmd.helpInformation());
  return 1;
}

/** The message of whatever was thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
