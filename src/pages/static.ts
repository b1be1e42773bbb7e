/**
 * Static files (templates/static: the stylesheet and the page scripts). URLs carry a content hash
 * (`/static/app.css?v=1a2b3c4d`) so browsers may cache them for a year and still see a new release.
 */
import type { Context } from 'hono';
import { createHash } from 'node:crypto';
import { listAssets, readAsset } from '../lib/assets.js';

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
};

interface StaticFile {
  body: Buffer;
  type: string;
  version: string;
}

let files: Map<string, StaticFile> | undefined;

function load(): Map<string, StaticFile> {
  if (files) return files;
  files = new Map();
  for (const name of listAssets('templates/static')) {
    const ext = name.split('.').pop() ?? '';
    const type = TYPES[ext];
    if (!type) continue;
    const body = readAsset(`templates/static/${name}`);
    files.set(name, { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 10) });
  }
  return files;
}

export function staticUrl(name: string): string {
  const file = load().get(name);
  if (!file) throw new Error(`static: no file templates/static/${name}`);
  return `/static/${name}?v=${file.version}`;
}

/** GET /static/:name; undefined when there is no such file. */
export function serveStatic(c: Context, name: string): Response | undefined {
  const file = load().get(name);
  if (!file) return undefined;
  const immutable = c.req.query('v') === file.version;
  return c.body(new Uint8Array(file.body), 200, {
    'Content-Type': file.type,
    'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
  });
}
