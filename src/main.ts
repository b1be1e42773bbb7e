/** argv -> command; exit codes (0 ok, 1 runtime failure, 2 usage or configuration error). */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { MigrationError } from './db/migrator.js';
import { BackupError, runBackup } from './cli/backup.js';
import { runDoctor } from './cli/doctor.js';
import { runInit } from './cli/init.js';
import { runMigrate } from './cli/migrate.js';
import { checkMerchantArgs, MerchantCommandError, readPassword, runMerchantCreate } from './cli/merchant.js';
import { HELP, UsageError } from './cli/usage.js';
import { runServe, ServeError } from './serve.js';
import { versionLine } from './cli/version.js';

const out = (line: string) => process.stdout.write(`${line}\n`);

function parse(args: string[], options: NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!);
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(HELP);
        return command === undefined ? 2 : 0;
      case 'version':
      case '--version':
        out(await versionLine());
        return 0;
      case 'init': {
        const { values } = parse(rest, { dir: { type: 'string' } });
        return runInit(values.dir as string | undefined, out);
      }
      case 'migrate': {
        const { values } = parse(rest, { config: { type: 'string' }, status: { type: 'boolean' } });
        return runMigrate(loadConfig({ path: values.config as string | undefined }), values.status === true, out);
      }
      case 'serve': {
        const { values } = parse(rest, { config: { type: 'string' } });
        return await runServe(loadConfig({ path: values.config as string | undefined }));
      }
      case 'merchant': {
        const [sub, ...more] = rest;
        if (sub !== 'create') throw new UsageError(`unknown merchant command ${sub === undefined ? '(none)' : `"${sub}"`}; expected "merchant create"`);
        const { values } = parse(more, { config: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } });
        const config = loadConfig({ path: values.config as string | undefined });
        const input = { email: values.email as string | undefined, name: values.name as string | undefined };
        checkMerchantArgs(input);
        return await runMerchantCreate(config, input, await readPassword(), out);
      }
      case 'backup': {
        const { values, positionals } = parse(rest, { config: { type: 'string' }, force: { type: 'boolean' } }, true);
        if (positionals.length !== 1) throw new UsageError('backup needs exactly one FILE: gatewayd backup FILE [--config FILE] [--force]');
        const config = loadConfig({ path: values.config as string | undefined });
        return await runBackup(config, { file: positionals[0]!, force: values.force === true, progress: process.stderr }, out);
      }
      case 'doctor': {
        const { values } = parse(rest, { config: { type: 'string' } });
        return await runDoctor(() => loadConfig({ path: values.config as string | undefined }), out);
      }
      default:
        throw new UsageError(`unknown command "${command}"; see gatewayd --help`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`gatewayd: ${err.message}\n`);
      return 2;
    }
    if (err instanceof MigrationError || err instanceof ServeError || err instanceof MerchantCommandError || err instanceof BackupError) {
      process.stderr.write(`gatewayd: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`gatewayd: ${(err as Error).message ?? String(err)}\n`);
    return 1;
  }
}
