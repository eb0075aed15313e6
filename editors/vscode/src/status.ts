// The status-bar text from the server's `folio/status` notification (documents and broken
// links over the workspace, sent when they change to a client that sets
// `experimental.folioStatus`). Indexing progress itself comes as LSP work-done progress,
// which vscode-languageclient shows in the status bar on its own. No `vscode` import, so
// the node test can load it.

/** Client capabilities the extension adds to what vscode-languageclient sends. */
export const experimentalCapabilities = { folioStatus: true };

/** The custom notification carrying the counts. */
export const STATUS_NOTIFICATION = 'folio/status';

export interface Counts {
  documents: number;
  brokenLinks: number;
}

export interface StatusView {
  text: string;
  tooltip: string;
}

/** What the status-bar item shows: `running` is false when the server is not running,
 * `busy` while a search or reindex request of the extension is out, `counts` the last
 * `folio/status` (undefined until the first scan is done). */
export function statusView(running: boolean, busy: boolean, counts: Counts | undefined): StatusView {
  if (!running) {
    return { text: '$(warning) folio', tooltip: 'folio: the language server is not running (click for output)' };
  }
  if (busy || counts === undefined) {
    return { text: '$(sync~spin) folio: indexing', tooltip: 'folio: indexing the knowledge base' };
  }
  const docs = `${counts.documents} Markdown ${counts.documents === 1 ? 'file' : 'files'}`;
  if (counts.brokenLinks === 0) {
    return { text: '$(check) folio', tooltip: `folio: ${docs}, no broken links (click for output)` };
  }
  const links = `${counts.brokenLinks} broken ${counts.brokenLinks === 1 ? 'link' : 'links'}`;
  return { text: `$(link) folio: ${counts.brokenLinks} broken`, tooltip: `folio: ${docs}, ${links} (click for output)` };
}
