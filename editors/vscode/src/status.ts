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

/** Opens the Problems view (a built-in VS Code command). */
export const PROBLEMS_COMMAND = 'workbench.actions.view.problems';
/** Shows the extension's output channel. */
export const OUTPUT_COMMAND = 'folio.showOutput';

export interface StatusView {
  text: string;
  tooltip: string;
  /** What a click on the item runs. */
  command: string;
}

/** What the status-bar item shows: `running` is false when the server is not running,
 * `busy` while a search or reindex request of the extension is out, `counts` the last
 * `folio/status` (undefined until the first scan is done).
 *
 * The number counts broken links in every Markdown file of the workspace, and the
 * Problems view lists each of them (the server reports the diagnostics of every file,
 * open or not). A click opens the Problems view, or the output while the server is not
 * running. */
export function statusView(running: boolean, busy: boolean, counts: Counts | undefined): StatusView {
  if (!running) {
    return { text: '$(warning) folio', tooltip: 'folio: the language server is not running (click for its output)', command: OUTPUT_COMMAND };
  }
  if (busy || counts === undefined) {
    return { text: '$(sync~spin) folio: indexing', tooltip: 'folio: indexing the knowledge base (click for the Problems view)', command: PROBLEMS_COMMAND };
  }
  const docs = `${counts.documents} Markdown ${counts.documents === 1 ? 'file' : 'files'}`;
  if (counts.brokenLinks === 0) {
    return { text: '$(check) folio', tooltip: `folio: no broken links in the workspace (${docs}) (click for the Problems view)`, command: PROBLEMS_COMMAND };
  }
  const links = `${counts.brokenLinks} broken ${counts.brokenLinks === 1 ? 'link' : 'links'}`;
  return {
    text: `$(link) folio: ${counts.brokenLinks} broken in workspace`,
    tooltip: `folio: ${links} in the workspace (${docs}), each listed in the Problems view (click to open it)`,
    command: PROBLEMS_COMMAND,
  };
}
