// The server's stderr in the output channel at the level each line was logged at.
// `folio lsp` logs with tracing's plain format, `<RFC 3339 time>  <LEVEL> <target>: <text>`
// (no colours when stderr is not a terminal); a line in any other shape (a panic, the
// final `folio: error: …`) is an error. No `vscode` import, so the node test can load it.

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface LogLine {
  level: Level;
  /** The line without the server's timestamp and level (the channel adds its own). */
  text: string;
}

const TRACING_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\s+(TRACE|DEBUG|INFO|WARN|ERROR)\s+(.*)$/;

/** The level and text of one line the server wrote to stderr. */
export function parseLogLine(line: string): LogLine {
  const m = TRACING_LINE.exec(line);
  if (!m) return { level: 'error', text: line };
  return { level: m[1].toLowerCase() as Level, text: m[2] };
}

/** The `FOLIO_LOG` filter matching a log output channel's level (the numbers of
 * `vscode.LogLevel`: Off 0, Trace 1, Debug 2, Info 3, Warning 4, Error 5), so the server
 * writes what the channel shows. */
export function logFilter(channelLevel: number): string {
  return ['off', 'trace', 'debug', 'info', 'warn', 'error'][channelLevel] ?? 'info';
}
