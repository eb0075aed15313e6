// VS Code's built-in Markdown support (the extension `vscode.markdown-language-features`,
// which also draws the preview) lists the headings of a Markdown file in the outline and,
// when `markdown.validate.enabled` is on, reports broken links, for the same files as
// folio. With both, the outline and Ctrl+Shift+O show every heading twice and Problems
// shows a broken link twice. VS Code has no setting that turns off its Markdown outline
// alone, so folio leaves the outline to it (`folio.documentSymbols`: "auto"); its link
// validation has a setting, and folio offers once to turn it off.
import * as vscode from 'vscode';

export const BUILTIN_MARKDOWN = 'vscode.markdown-language-features';
const VALIDATION_ASKED = 'folio.builtinValidationAsked';

/** Whether folio's document symbols go to VS Code: always with `folio.documentSymbols`
 * "always"; with "auto" (the default) only when the built-in Markdown extension is
 * disabled, since it lists the same headings. */
export function folioDocumentSymbols(): boolean {
  const setting = vscode.workspace.getConfiguration('folio').get<string>('documentSymbols') ?? 'auto';
  return setting === 'always' || vscode.extensions.getExtension(BUILTIN_MARKDOWN) === undefined;
}

/** When VS Code's own Markdown link validation is on, offers once (remembered in the
 * extension's global state once answered) to turn it off where it is set, so each broken
 * link is reported once, by folio. */
export async function offerToTurnOffBuiltinValidation(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<void> {
  const markdown = vscode.workspace.getConfiguration('markdown');
  if (!markdown.get<boolean>('validate.enabled') || context.globalState.get<boolean>(VALIDATION_ASKED)) return;
  const turnOff = "Turn off VS Code's";
  const keep = 'Keep both';
  const choice = await vscode.window.showInformationMessage(
    "folio: VS Code's own Markdown link validation (markdown.validate.enabled) is on, so broken links are reported twice. Turn it off?",
    turnOff,
    keep,
  );
  if (choice === undefined) return;
  await context.globalState.update(VALIDATION_ASKED, true);
  if (choice !== turnOff) return;
  const set = markdown.inspect<boolean>('validate.enabled');
  // The most specific scope that turns it on; the user settings when only the default does.
  const target =
    set?.workspaceFolderValue !== undefined || set?.workspaceValue !== undefined
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
  await markdown.update('validate.enabled', false, target);
  log.info(`turned off markdown.validate.enabled in the ${target === vscode.ConfigurationTarget.Workspace ? 'workspace' : 'user'} settings`);
}
