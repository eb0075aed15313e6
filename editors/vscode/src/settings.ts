// Maps the `folio.*` settings to the server's configuration (the tables of folio.toml,
// docs/lsp.md "Configuration"). Only settings the user set are sent, so folio.toml
// keeps the others.
import type * as vscode from 'vscode';

export interface ServerSettings {
  folio: {
    diagnostics?: { silence?: string[]; silence_targets?: string[]; fragment_case_sensitive?: boolean };
    wiki?: { style?: string };
  };
}

function explicit<T>(config: vscode.WorkspaceConfiguration, key: string): T | undefined {
  const i = config.inspect<T>(key);
  if (!i) {
    return undefined;
  }
  return i.workspaceFolderValue ?? i.workspaceValue ?? i.globalValue;
}

export function serverSettings(config: vscode.WorkspaceConfiguration): ServerSettings {
  const diagnostics: NonNullable<ServerSettings['folio']['diagnostics']> = {};
  const silence = explicit<string[]>(config, 'diagnostics.silence');
  if (silence !== undefined) diagnostics.silence = silence;
  const targets = explicit<string[]>(config, 'diagnostics.silenceTargets');
  if (targets !== undefined) diagnostics.silence_targets = targets;
  const caseSensitive = explicit<boolean>(config, 'diagnostics.fragmentCaseSensitive');
  if (caseSensitive !== undefined) diagnostics.fragment_case_sensitive = caseSensitive;
  const out: ServerSettings = { folio: {} };
  if (Object.keys(diagnostics).length > 0) out.folio.diagnostics = diagnostics;
  const style = explicit<string>(config, 'wiki.style');
  if (style !== undefined) out.folio.wiki = { style };
  return out;
}
