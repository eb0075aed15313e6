// The channel vscode-languageclient writes its message trace to. The language client
// traces only while its trace channel's log level is Trace, and the level of a log output
// channel is the user's to set (Info by default), so `folio.trace.server` alone would
// show nothing. This channel is a plain output channel, "folio trace", whose level reads
// Trace while `folio.trace.server` is "messages" or "verbose" and Off otherwise, and
// which tells the client when that setting changes.
import * as vscode from 'vscode';

function traceSetting(): string {
  return vscode.workspace.getConfiguration('folio').get<string>('trace.server') ?? 'off';
}

export function traceChannel(): vscode.LogOutputChannel {
  const channel = vscode.window.createOutputChannel('folio trace');
  const levelChanged = new vscode.EventEmitter<vscode.LogLevel>();
  const level = () => (traceSetting() === 'off' ? vscode.LogLevel.Off : vscode.LogLevel.Trace);
  const watcher = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('folio.trace.server')) levelChanged.fire(level());
  });
  const line = (text: string) => channel.appendLine(text);
  return {
    get name() {
      return channel.name;
    },
    get logLevel() {
      return level();
    },
    onDidChangeLogLevel: levelChanged.event,
    trace: line,
    debug: line,
    info: line,
    warn: line,
    error: (e: string | Error) => line(typeof e === 'string' ? e : e.message),
    append: (text: string) => channel.append(text),
    appendLine: line,
    replace: (text: string) => channel.replace(text),
    clear: () => channel.clear(),
    show: (a?: boolean | vscode.ViewColumn, b?: boolean) => (typeof a === 'boolean' ? channel.show(a) : channel.show(a, b)),
    hide: () => channel.hide(),
    dispose: () => {
      watcher.dispose();
      levelChanged.dispose();
      channel.dispose();
    },
  };
}
