// Drives the built `folio lsp` over stdio with vscode-languageserver-protocol (the
// library under vscode-languageclient), offering the client capabilities VS Code sends:
// open, pulled diagnostics, symbols, folio/search, and a rename whose workspace edit the
// client applies. FOLIO_BIN is the binary; tests/fixtures/foam-docs is the workspace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import rpc from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { createRequire } from 'node:module';

// The extension's settings mapping and status-bar view (out/settings.js and out/status.js,
// built by tsc; they need no `vscode` module).
const { serverSettings } = createRequire(import.meta.url)('../out/settings.js');
const { statusView, experimentalCapabilities, STATUS_NOTIFICATION } = createRequire(import.meta.url)('../out/status.js');
const { serverBinary } = createRequire(import.meta.url)('../out/server.js');

/** A WorkspaceConfiguration whose user settings are `values`. */
function fakeConfig(values) {
  return { inspect: (key) => (key in values ? { key, globalValue: values[key] } : { key }) };
}

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.resolve(here, '../../../tests/fixtures/foam-docs');
const bin = process.env.FOLIO_BIN;
// Broken links (error diagnostics) in tests/fixtures/foam-docs, as `folio check` counts them.
const BROKEN = 6;

// What VS Code 1.9x offers for the features exercised here (trimmed from its initialize request).
const vscodeCapabilities = {
  general: { positionEncodings: ['utf-16'], markdown: { parser: 'marked', version: '1.1.0' } },
  workspace: {
    applyEdit: true,
    workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'], failureHandling: 'textOnlyTransactional', normalizesLineEndings: true, changeAnnotationSupport: { groupsOnLabel: true } },
    didChangeConfiguration: { dynamicRegistration: true },
    didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
    symbol: { dynamicRegistration: true, symbolKind: { valueSet: Array.from({ length: 26 }, (_, i) => i + 1) } },
    workspaceFolders: true,
    configuration: true,
    diagnostics: { refreshSupport: true },
    fileOperations: { dynamicRegistration: true, didCreate: true, didRename: true, didDelete: true, willCreate: true, willRename: true, willDelete: true },
  },
  textDocument: {
    synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true },
    publishDiagnostics: { relatedInformation: true, versionSupport: false, tagSupport: { valueSet: [1, 2] }, codeDescriptionSupport: true, dataSupport: true },
    diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
    documentSymbol: { dynamicRegistration: true, hierarchicalDocumentSymbolSupport: true, symbolKind: { valueSet: Array.from({ length: 26 }, (_, i) => i + 1) }, labelSupport: true },
    rename: { dynamicRegistration: true, prepareSupport: true, prepareSupportDefaultBehavior: 1, honorsChangeAnnotations: true },
    definition: { dynamicRegistration: true, linkSupport: true },
  },
  window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } }, showDocument: { support: true } },
  // Added by the extension's static feature (src/extension.ts).
  experimental: experimentalCapabilities,
};

/** Resolves when `pred()` holds (polled), failing after 20 s. */
async function until(pred, what) {
  const started = Date.now();
  while (!pred()) {
    assert.ok(Date.now() - started < 20000, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Applies [uri, edits] pairs to open documents and sends the didChange of each. */
function applyEdits(conn, docs, perDoc) {
  for (const [uri, edits] of perDoc) {
    const doc = docs.get(uri);
    assert.ok(doc, `edit of a document that is not open: ${uri}`);
    const next = TextDocument.create(uri, 'markdown', doc.version + 1, TextDocument.applyEdits(doc, edits));
    docs.set(uri, next);
    conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: next.version }, contentChanges: [{ text: next.getText() }] });
  }
}

function start(root) {
  // Lexical only: pinned results must not depend on whether the built-in model is installed.
  const child = spawn(bin, ['lsp'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, FOLIO_EMBED_PROVIDER: 'none' } });
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const docs = new Map();
  const serverRequests = [];
  const requestParams = [];
  const notifications = [];
  conn.onNotification((method, params) => notifications.push({ method, params }));
  conn.onRequest((method, params) => {
    serverRequests.push(method);
    requestParams.push({ method, params });
    if (method === 'window/workDoneProgress/create') {
      // As vscode-languageclient's ProgressPart does: listen to $/progress of that token.
      const token = params.token;
      conn.onProgress(rpc.WorkDoneProgress.type, token, (value) => notifications.push({ method: '$/progress', params: { token, value } }));
      return null;
    }
    if (method === 'workspace/applyEdit') {
      // Apply as VS Code does: every text edit of every document, then didChange.
      const e = params.edit;
      applyEdits(conn, docs, e.documentChanges ? e.documentChanges.map((c) => [c.textDocument.uri, c.edits]) : Object.entries(e.changes ?? {}));
      return { applied: true };
    }
    if (method === 'workspace/configuration') return params.items.map(() => null);
    return null;
  });
  conn.listen();
  const of = (method) => notifications.filter((n) => n.method === method).map((n) => n.params);
  return { child, conn, docs, serverRequests, requestParams, of };
}

async function initialize(conn, rootUri, name) {
  const init = await conn.sendRequest('initialize', {
    processId: process.pid,
    clientInfo: { name: 'Visual Studio Code', version: '1.99.0' },
    rootUri,
    capabilities: vscodeCapabilities,
    workspaceFolders: [{ uri: rootUri, name }],
    initializationOptions: { folio: {} },
  });
  conn.sendNotification('initialized', {});
  return init;
}

test('folio lsp with VS Code client capabilities: open, diagnostics, symbols, folio/search, rename', async () => {
  assert.ok(bin, 'FOLIO_BIN must name the built folio binary');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-vscode-'));
  fs.cpSync(fixture, root, { recursive: true });
  fs.mkdirSync(path.join(root, '.git'));
  const rootUri = pathToFileURL(fs.realpathSync(root)).href;
  const { child, conn, docs, serverRequests, requestParams, of } = start(root);
  try {
    const init = await initialize(conn, rootUri, 'foam-docs');
    assert.equal(init.serverInfo.name, 'folio');
    assert.equal(init.capabilities.positionEncoding ?? 'utf-16', 'utf-16');
    // VS Code pulls diagnostics when it can be asked to refresh.
    assert.ok(init.capabilities.diagnosticProvider, 'pull diagnostics advertised');

    // The initial scan: work-done progress (shown by vscode-languageclient in the status
    // bar), then folio/status with the counts the extension's status-bar item shows.
    await until(() => of(STATUS_NOTIFICATION).length === 1, 'folio/status');
    const realRoot = fs.realpathSync(root);
    assert.deepEqual(of(STATUS_NOTIFICATION), [{ documents: 7, brokenLinks: BROKEN }]);
    assert.deepEqual(requestParams.filter((r) => r.method === 'window/workDoneProgress/create').map((r) => r.params), [{ token: 'folio/scan/1' }]);
    assert.deepEqual(of('$/progress'), [
      { token: 'folio/scan/1', value: { kind: 'begin', title: 'folio: indexing', cancellable: false, message: `scanning ${realRoot}` } },
      { token: 'folio/scan/1', value: { kind: 'report', message: `7 documents in ${realRoot}` } },
      { token: 'folio/scan/1', value: { kind: 'end', message: `7 documents, ${BROKEN} broken links` } },
    ]);
    assert.deepEqual(statusView(true, false, of(STATUS_NOTIFICATION)[0]), {
      text: `$(link) folio: ${BROKEN} broken in workspace`,
      tooltip: `folio: ${BROKEN} broken links in the workspace (7 Markdown files), each listed in the Problems view (click to open it)`,
      command: 'workbench.actions.view.problems',
    });
    assert.deepEqual(of('window/showMessage'), []);

    const open = (rel) => {
      const uri = `${rootUri}/${rel}`;
      const text = fs.readFileSync(path.join(root, rel), 'utf8');
      docs.set(uri, TextDocument.create(uri, 'markdown', 1, text));
      conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version: 1, text } });
      return uri;
    };

    // Open and diagnostics.
    const search = open('user/tools/cli/search.md');
    const report = await conn.sendRequest('textDocument/diagnostic', { textDocument: { uri: search } });
    assert.equal(report.kind, 'full');
    assert.deepEqual(
      report.items.map((d) => [d.range.start.line, d.range.start.character, d.code, d.severity, d.source]),
      [[10, 36, 'missing-wiki-target', 1, 'folio']],
    );

    // Settings, mapped as the extension does and sent with workspace/didChangeConfiguration.
    const settings = serverSettings(fakeConfig({ 'diagnostics.silence': ['missing-wiki-target'], 'wiki.style': 'title' }));
    assert.deepEqual(settings, { folio: { diagnostics: { silence: ['missing-wiki-target'] }, wiki: { style: 'title' } } });
    assert.deepEqual(serverSettings(fakeConfig({})), { folio: {} });
    conn.sendNotification('workspace/didChangeConfiguration', { settings });
    const silenced = await conn.sendRequest('textDocument/diagnostic', { textDocument: { uri: search } });
    assert.deepEqual(silenced.items, []);
    conn.sendNotification('workspace/didChangeConfiguration', { settings: serverSettings(fakeConfig({})) });
    const back = await conn.sendRequest('textDocument/diagnostic', { textDocument: { uri: search } });
    assert.equal(back.items.length, 1);

    // Document symbols (hierarchical).
    const symbols = await conn.sendRequest('textDocument/documentSymbol', { textDocument: { uri: search } });
    const flat = [];
    const walk = (list, depth) => list.forEach((s) => { flat.push([depth, s.name, s.selectionRange.start.line]); walk(s.children ?? [], depth + 1); });
    walk(symbols, 0);
    assert.deepEqual(flat, [[0, 'foam search', 0], [1, 'Options', 12], [1, 'Examples', 24]]);

    // folio/search: the kb_search hits with file URIs.
    // The first search opens the index and starts its first pass; a search on a busy
    // machine may answer before that pass ends, with `partial`: ask again then.
    let found;
    for (let attempt = 0; attempt < 5; attempt++) {
      found = await conn.sendRequest('folio/search', { query: 'find broken wikilinks', limit: 3 });
      if (!found.partial) break;
    }
    assert.equal(found.partial ?? false, false);
    assert.equal(found.low_confidence, false, JSON.stringify(found.results.map((h) => [h.path, h.score])));
    assert.deepEqual(found.filter_applied, []);
    assert.equal(found.results.length, 3);
    assert.deepEqual(found.results.slice(0, 2).map((h) => [h.path, h.start_line, h.end_line, h.heading_path]), [
      ['user/tools/cli/list.md', 32, 85, ['foam list', 'Examples']],
      ['user/tools/cli/search.md', 25, 63, ['foam search', 'Examples']],
    ]);
    // folio/reindex without params, as the extension sends it: nothing changed since the search.
    const summary = await conn.sendRequest('folio/reindex');
    assert.deepEqual([summary.files, summary.indexed, summary.unchanged, summary.removed], [7, 0, 7, 0]);
    // With its own progress.
    await until(() => of('$/progress').length === 5, 'the end of the reindex progress');
    assert.deepEqual(of('$/progress').slice(3), [
      { token: 'folio/reindex/2', value: { kind: 'begin', title: 'folio: reindexing', cancellable: false, message: `indexing ${realRoot}` } },
      { token: 'folio/reindex/2', value: { kind: 'end', message: 'indexed 0 of 7 files (7 unchanged, 0 removed)' } },
    ]);
    assert.equal(found.results[0].file_uri, `${rootUri}/user/tools/cli/list.md`);
    assert.equal(found.results[0].uri, 'kb://doc/user/tools/cli/list.md');

    // Rename a heading: the server sends workspace/applyEdit, the client applies it.
    const templates = open('user/features/templates.md');
    const edit = conn.sendRequest('textDocument/rename', { textDocument: { uri: templates }, position: { line: 61, character: 5 }, newName: 'JS Templates' });
    const result = await edit;
    // The rename result is a workspace edit; apply it as VS Code does (documentChanges or changes).
    assert.ok(result, 'rename returned an edit');
    const perDoc = result.documentChanges
      ? result.documentChanges.map((c) => [c.textDocument.uri, c.edits])
      : Object.entries(result.changes ?? {});
    assert.deepEqual(perDoc.map(([uri, edits]) => [uri, edits.length]), [[templates, 2]]);
    applyEdits(conn, docs, perDoc);
    const lines = docs.get(templates).getText().split('\n');
    assert.equal(lines[61], '## JS Templates');
    assert.equal(lines[22], '- Create a `.js` file in the `.foam/templates` directory (see [JavaScript Templates](#js-templates) section below)');
    const after = await conn.sendRequest('textDocument/diagnostic', { textDocument: { uri: templates } });
    assert.deepEqual(after.items.filter((d) => d.code === 'missing-heading'), []);

    await conn.sendRequest('shutdown');
    conn.sendNotification('exit');
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0);
    // The server registered its file watcher with the client (dynamic registration).
    assert.ok(serverRequests.includes('client/registerCapability'), serverRequests.join(', '));
  } finally {
    conn.dispose();
    child.kill();
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a workspace without Markdown: one warning, status counts zero, requests still answer', async () => {
  assert.ok(bin, 'FOLIO_BIN must name the built folio binary');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-vscode-empty-'));
  fs.mkdirSync(path.join(root, '.git'));
  fs.writeFileSync(path.join(root, 'data.json'), '{}\n');
  const realRoot = fs.realpathSync(root);
  const rootUri = pathToFileURL(realRoot).href;
  const { child, conn, of } = start(root);
  try {
    await initialize(conn, rootUri, 'empty');
    await until(() => of(STATUS_NOTIFICATION).length === 1, 'folio/status');
    // vscode-languageclient shows window/showMessage as a VS Code warning: exactly one.
    assert.deepEqual(of('window/showMessage'), [{ type: 2, message: `folio: no Markdown files under ${realRoot}` }]);
    assert.deepEqual(of(STATUS_NOTIFICATION), [{ documents: 0, brokenLinks: 0 }]);
    assert.deepEqual(statusView(true, false, of(STATUS_NOTIFICATION)[0]), {
      text: '$(check) folio',
      tooltip: 'folio: no broken links in the workspace (0 Markdown files) (click for the Problems view)',
      command: 'workbench.actions.view.problems',
    });
    // A new Markdown buffer: diagnostics, search and reindex answer without errors or more messages.
    const uri = `${rootUri}/new.md`;
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version: 1, text: '# New\n\n[gone](gone.md)\n' } });
    const report = await conn.sendRequest('textDocument/diagnostic', { textDocument: { uri } });
    assert.deepEqual(report.items.map((d) => d.code), ['missing-file']);
    const found = await conn.sendRequest('folio/search', { query: 'anything', limit: 5 });
    assert.deepEqual(found.results, []);
    const summary = await conn.sendRequest('folio/reindex');
    assert.deepEqual([summary.files, summary.indexed], [0, 0]);
    await until(() => of(STATUS_NOTIFICATION).length === 2, 'folio/status after the new buffer');
    assert.deepEqual(of(STATUS_NOTIFICATION)[1], { documents: 1, brokenLinks: 1 });
    assert.equal(of('window/showMessage').length, 1);
    await conn.sendRequest('shutdown');
    conn.sendNotification('exit');
    assert.equal(await new Promise((resolve) => child.on('exit', resolve)), 0);
  } finally {
    conn.dispose();
    child.kill();
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("the server's stderr goes to the output channel at the level of each line", async () => {
  const { parseLogLine, logFilter } = createRequire(import.meta.url)('../out/log.js');
  // vscode.LogLevel: Off 0, Trace 1, Debug 2, Info 3, Warning 4, Error 5.
  assert.deepEqual([0, 1, 2, 3, 4, 5].map(logFilter), ['off', 'trace', 'debug', 'info', 'warn', 'error']);
  // Lines outside tracing's format (a panic, `folio: error: …`) are errors.
  assert.deepEqual(parseLogLine("thread 'main' panicked at lsp/src/server.rs:1:1:"), { level: 'error', text: "thread 'main' panicked at lsp/src/server.rs:1:1:" });
  assert.deepEqual(parseLogLine('2026-11-30T20:46:18.315123Z  WARN folio_lsp::bridge: no bridge for /x: denied'), { level: 'warn', text: 'folio_lsp::bridge: no bridge for /x: denied' });

  // What the real server writes at FOLIO_LOG=info, as the extension starts it.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-vscode-log-'));
  fs.cpSync(fixture, root, { recursive: true });
  const realRoot = fs.realpathSync(root);
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-vscode-run-'));
  const child = spawn(bin, ['lsp'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, FOLIO_EMBED_PROVIDER: 'none', FOLIO_LOG: logFilter(3), XDG_RUNTIME_DIR: runtime } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  conn.onRequest(() => null);
  conn.listen();
  try {
    await initialize(conn, pathToFileURL(realRoot).href, 'foam-docs');
    await until(() => stderr.includes(' loaded 7 documents under '), 'the scan in the log');
    const lines = stderr.trimEnd().split('\n').map(parseLogLine);
    assert.deepEqual(lines.map((l) => l.level), lines.map(() => 'info'), stderr);
    assert.ok(lines.some((l) => l.text.startsWith(`folio_lsp::session: loaded 7 documents under ${realRoot} in `)), stderr);
    assert.ok(lines.some((l) => l.text.startsWith(`folio_lsp::bridge: bridge for ${realRoot} at ${runtime}/folio/`)), stderr);
  } finally {
    conn.dispose();
    child.kill();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(runtime, { recursive: true, force: true });
  }
});

test('the server: folio.path, else the one the package carries, else folio on PATH', () => {
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-ext-'));
  try {
    assert.deepEqual(serverBinary('', ext, 'linux'), { bin: 'folio', source: 'PATH' });
    fs.mkdirSync(path.join(ext, 'server'));
    fs.writeFileSync(path.join(ext, 'server', 'folio'), '');
    assert.deepEqual(serverBinary(undefined, ext, 'linux'), { bin: path.join(ext, 'server', 'folio'), source: 'bundled with the extension' });
    assert.deepEqual(serverBinary('  /opt/folio  ', ext, 'linux'), { bin: '/opt/folio', source: 'folio.path' });
    // Windows packages carry folio.exe.
    assert.deepEqual(serverBinary('', ext, 'win32'), { bin: 'folio', source: 'PATH' });
    fs.writeFileSync(path.join(ext, 'server', 'folio.exe'), '');
    assert.deepEqual(serverBinary('', ext, 'win32'), { bin: path.join(ext, 'server', 'folio.exe'), source: 'bundled with the extension' });
  } finally {
    fs.rmSync(ext, { recursive: true, force: true });
  }
});
