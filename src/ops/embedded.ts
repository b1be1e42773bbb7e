/**
 * Run-time side of the packaged executable (bin/build-binary.mjs): the files that ship with the
 * program (migrations, templates, locales, static files) and the native addons are SEA assets.
 * Files are served through setAssetSource; addons are written once to a content-addressed cache
 * folder and loaded with process.dlopen, because a SEA cannot require() a file path.
 * Outside the binary nothing here runs.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants, homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as sea from 'node:sea';
import { setAssetSource } from '../lib/assets.js';

/** The build writes this asset: every embedded file's relative path, and the addon asset keys. */
export const MANIFEST_KEY = 'gatewayd-manifest.json';
export const FILE_PREFIX = 'file:';
export const ADDON_PREFIX = 'addon:';

export interface Manifest {
  version: string;
  files: string[];
  addons: string[];
}

let manifest: Manifest | undefined;

function readManifest(): Manifest {
  return (manifest ??= JSON.parse(sea.getAsset(MANIFEST_KEY, 'utf8')) as Manifest);
}

/** Serves readAsset/listAssets from the embedded copies. */
export function installEmbeddedAssets(): void {
  const files = new Set(readManifest().files);
  setAssetSource({
    read(relativePath) {
      const key = relativePath.replace(/^\.\//, '');
      if (!files.has(key)) {
        const err = new Error(`ENOENT: no embedded file ${key}`) as NodeJS.ErrnoException;
        err.code = 'ENOENT';
        throw err;
      }
      return Buffer.from(sea.getAsset(FILE_PREFIX + key));
    },
    list(relativeDir) {
      const prefix = `${relativeDir.replace(/^\.\//, '').replace(/\/$/, '')}/`;
      const names = new Set<string>();
      for (const f of files) {
        if (f.startsWith(prefix)) names.add(f.slice(prefix.length).split('/')[0]!);
      }
      return [...names].sort();
    },
  });
}

/**
 * Folders tried for the addon cache, in order. $XDG_CACHE_HOME or ~/.cache first (survives
 * reboots), then the temp dir. Reading the environment here is the one exception to "only
 * config.ts reads process.env": this runs before any configuration exists.
 */
function cacheCandidates(): string[] {
  const list: string[] = [];
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg) list.push(join(xdg, 'gatewayd'));
  try {
    const home = homedir();
    if (home && home !== '/') list.push(join(home, '.cache', 'gatewayd'));
  } catch {
    /* no home directory for this user (e.g. a system account): fall through */
  }
  list.push(join(tmpdir(), `gatewayd-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`));
  return list;
}

const loaded = new Map<string, unknown>();

/**
 * A folder we may load code from: a real directory owned by this user that nobody else can write
 * to. Otherwise another local user could plant a library in a shared temp folder for us to load.
 */
function isPrivateFolder(dir: string): boolean {
  const st = lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  return st.isDirectory() && st.uid === uid && (st.mode & 0o022) === 0;
}

/**
 * Loads an embedded native addon. The file name holds the content hash, so two versions never
 * collide; a file is written under a temporary name and renamed, and an existing one is loaded
 * only when its bytes match the embedded copy. A folder that is not writable, not private or
 * mounted noexec makes the attempt fail: the next folder is tried.
 */
export function loadNativeAddon(name: string): unknown {
  const cached = loaded.get(name);
  if (cached) return cached;
  const bytes = Buffer.from(sea.getAsset(ADDON_PREFIX + name));
  const digest = createHash('sha256').update(bytes).digest('hex');
  const errors: string[] = [];
  for (const dir of cacheCandidates()) {
    // Node's recursive mkdir never returns on procfs (mkdir answers ENOENT there forever).
    if (dir.startsWith('/proc/')) continue;
    const file = join(dir, `${digest.slice(0, 16)}-${name}`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!isPrivateFolder(dir)) throw new Error('not a private folder (owner or mode)');
      const intact = existsSync(file) && createHash('sha256').update(readFileSync(file)).digest('hex') === digest;
      if (!intact) {
        const tmp = `${file}.${process.pid}.tmp`;
        // A read-only leftover of a crashed run with the same pid would refuse the write.
        rmSync(tmp, { force: true });
        writeFileSync(tmp, bytes, { mode: 0o500 });
        renameSync(tmp, file);
      }
      const mod = { exports: {} as unknown };
      process.dlopen(mod, file, osConstants.dlopen.RTLD_NOW);
      loaded.set(name, mod.exports);
      return mod.exports;
    } catch (err) {
      errors.push(`${dir}: ${(err as Error).message}`);
    }
  }
  throw new Error(`cannot load the embedded native addon ${name}: ${errors.join('; ')}`);
}
