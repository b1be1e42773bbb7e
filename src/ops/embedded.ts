/**
 * Run-time side of the packaged executable (bin/build-binary.mjs): the files that ship with the
 * program (migrations, templates, locales, static files), the native addons and the libraries only
 * some paths import are SEA assets. Files are served through setAssetSource; addons are written
 * once to a content-addressed cache folder and loaded with process.dlopen, because a SEA cannot
 * require() a file path; libraries are compiled from their asset on first import.
 * Outside the binary nothing here runs.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants, homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as sea from 'node:sea';
import { compileFunction } from 'node:vm';
import { setAssetSource } from '../lib/assets.js';

/** The build writes this asset: every embedded file's relative path, and the addon asset keys. */
export const MANIFEST_KEY = 'gatewayd-manifest.json';
export const FILE_PREFIX = 'file:';
export const ADDON_PREFIX = 'addon:';
export const LIBRARY_PREFIX = 'lib:';

export interface Manifest {
  version: string;
  files: string[];
  /** Addon name -> SHA-256 of its bytes (hex), computed by the build. */
  addons: Record<string, string>;
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
  // The digest comes from the manifest: the embedded bytes are read only to write the cache file,
  // so an ordinary start does not page the addon's copy inside the executable into memory.
  const digest = readManifest().addons[name];
  if (digest === undefined) throw new Error(`cannot load the embedded native addon ${name}: not in the manifest`);
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
        writeFileSync(tmp, new Uint8Array(sea.getAsset(ADDON_PREFIX + name)), { mode: 0o500 });
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

const libraries = new Map<string, { exports: unknown }>();

/** require() for Node's built-in modules, the only ones an embedded library may load. */
function requireBuiltin(id: string): unknown {
  const found = process.getBuiltinModule(id);
  if (found === undefined) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  return found;
}

/**
 * A library embedded as its own CommonJS bundle (nodemailer, qrcode, pg, jose, prom-client: see
 * LIBRARIES in bin/build-binary.mjs), compiled and run on its first import. Until then its code is
 * neither in memory nor paged in from the executable.
 */
export function loadEmbeddedLibrary(name: string): unknown {
  const done = libraries.get(name);
  if (done) return done.exports;
  const run = compileFunction(sea.getAsset(LIBRARY_PREFIX + name, 'utf8'), ['exports', 'require', 'module'], { filename: `gatewayd:${name}` });
  const module = { exports: {} as unknown };
  run(module.exports, requireBuiltin, module);
  libraries.set(name, module);
  return module.exports;
}
