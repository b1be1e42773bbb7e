/**
 * Entry point of the packaged executable (bundled by bin/build-binary.mjs; bin/gatewayd is the
 * entry everywhere else). Installs the embedded assets before anything reads a migration or a
 * template, then behaves exactly like bin/gatewayd.
 */
import { installEmbeddedAssets } from './embedded.js';
import { main } from '../main.js';

installEmbeddedAssets();
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    if (code !== 0 || process.argv[2] !== 'serve') {
      // Leave time for buffered log lines, then exit even if a handle is still open.
      setTimeout(() => process.exit(code), 50).unref();
    }
  },
  (err: unknown) => {
    process.stderr.write(`gatewayd: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  },
);
