/**
 * Files that ship with the program (migrations, templates, locales, static files), read relative
 * to the project root. The packaged executable replaces this lookup with its embedded copies
 * (see the packaging build), so code reads assets only through these two functions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface AssetSource {
  read(relativePath: string): Buffer;
  list(relativeDir: string): string[];
}

function findRoot(): string {
  // src/lib/assets.ts compiles to dist/src/lib/assets.js: the root is three levels up from dist/src/lib.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      readFileSync(join(dir, 'package.json'));
      return dir;
    } catch {
      dir = resolve(dir, '..');
    }
  }
  return process.cwd();
}

let root: string | undefined;
let override: AssetSource | undefined;

/** The packaged executable installs its embedded assets here at start-up. */
export function setAssetSource(source: AssetSource): void {
  override = source;
}

export function projectRoot(): string {
  return (root ??= findRoot());
}

export function readAsset(relativePath: string): Buffer {
  if (override) return override.read(relativePath);
  return readFileSync(join(projectRoot(), relativePath));
}

export function readAssetText(relativePath: string): string {
  return readAsset(relativePath).toString('utf8');
}

/** File names (not paths) in an asset folder, sorted. */
export function listAssets(relativeDir: string): string[] {
  if (override) return override.list(relativeDir);
  return readdirSync(join(projectRoot(), relativeDir)).sort();
}
