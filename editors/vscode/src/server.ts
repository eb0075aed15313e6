// Which `folio` executable the extension runs. No `vscode` import, so the node test can
// load it.
import * as fs from 'fs';
import * as path from 'path';

/** Where the server comes from: `folio.path` when set, else the executable a
 * platform-specific package of this extension carries in `server/` (`server/folio`, or
 * `server/folio.exe` on Windows; `scripts/package-vscode --target … --server …` puts it
 * there), else `folio` on PATH. `source` says which, for the output channel. */
export function serverBinary(setting: string | undefined, extensionPath: string, platform: NodeJS.Platform = process.platform): { bin: string; source: string } {
  if (setting && setting.trim()) return { bin: setting.trim(), source: 'folio.path' };
  const bundled = path.join(extensionPath, 'server', platform === 'win32' ? 'folio.exe' : 'folio');
  if (fs.existsSync(bundled)) return { bin: bundled, source: 'bundled with the extension' };
  return { bin: 'folio', source: 'PATH' };
}
