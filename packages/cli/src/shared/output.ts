/**
 * `samsa … | head -1`: when the reader of stdout (or stderr) goes away, a write fails with EPIPE.
 * Node reports that as an 'error' event on the stream, and with no listener it crashes the
 * process with a stack trace. Kafka's tools stop quietly instead; so does every samsa command:
 * the runner (main.ts) installs one listener on both streams for all of them.
 */
export function exitQuietlyOnClosedOutput(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  const onError = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    // cut short with the exit code the command has set so far (0 unless it already failed)
    process.exit(process.exitCode ?? 0);
  };
  for (const s of streams) s.on('error', onError);
}
