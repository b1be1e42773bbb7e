/** argv -> command; exit codes (0 ok, 1 runtime failure, 2 usage or configuration error). */
import { parseArgs } from 'node:util';
import { ConfigError, listenOverride, loadConfig, parseListen } from './config.js';
import { NetworkMismatchError } from './db/network-guard.js';
import { ArgumentError, HELP, HelpRequest, synopsisOf, usageOf, UsageError, type Command } from './cli/usage.js';

// Each command's module is imported when that command runs, so `serve` does not load the code (and
// the drivers) of backup, db copy, doctor or dev, nor they each other's (issue 32, footprint).
const cli = {
  backup: () => import('./cli/backup.js'),
  chain: () => import('./cli/chain.js'),
  dbCopy: () => import('./cli/db-copy.js'),
  dev: () => import('./cli/dev.js'),
  doctor: () => import('./cli/doctor.js'),
  init: () => import('./cli/init.js'),
  merchant: () => import('./cli/merchant.js'),
  migrate: () => import('./cli/migrate.js'),
  serve: () => import('./serve.js'),
  version: () => import('./cli/version.js'),
};

/** Spelled out: checkMerchantArgs is an assertion, which TypeScript only honours through declared types. */
type MerchantCli = typeof import('./cli/merchant.js');

const out = (line: string) => process.stdout.write(`${line}\n`);

type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

/** `--help`/`-h` anywhere before `--` asks for the command's usage, whatever else is there. */
function wantsHelp(command: Command, args: string[]): void {
  for (const arg of args) {
    if (arg === '--') return;
    if (arg === '--help' || arg === '-h') throw new HelpRequest(command);
  }
}

/** The command's options; a wrong one is named with the command's synopsis (Node's hints about `--` are left out). */
function parse(command: Command, args: string[], options: Options, allowPositionals = false) {
  wantsHelp(command, args);
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    const message = (err as Error).message
      .split('\n')[0]!
      .replace(/\. To specify a positional argument.*$/, '')
      .replace(/\.$/, '');
    throw new ArgumentError(message.charAt(0).toLowerCase() + message.slice(1), command);
  }
}

/** A command's own checks of its arguments: what they refuse is named with that command's synopsis. */
function checked<T>(command: Command, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof UsageError && !(err instanceof ArgumentError)) throw new ArgumentError(err.message, command);
    throw err;
  }
}

/** --listen is host:port: anything else is a usage error of the command, not a configuration error. */
function listenFlag(command: Command, listen: string | undefined): ReturnType<typeof listenOverride> {
  if (listen !== undefined && !parseListen(listen))
    throw new ArgumentError(`--listen ${JSON.stringify(listen)} must be host:port, e.g. 127.0.0.1:8080 (it sets server.listen for this run)`, command);
  return listenOverride(listen);
}

/** `gatewayd dev pay ID | head -1` closes stdout early: stop quietly instead of crashing on EPIPE. */
function quietOnClosedStdout(): void {
  if (process.stdout.listenerCount('error') > 0) return;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}

export async function main(argv: string[]): Promise<number> {
  quietOnClosedStdout();
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
        parse('version', rest, {});
        out(await (await cli.version()).versionLine());
        return 0;
      case 'init': {
        const flags = ['dir', 'domain', 'public-url', 'listen', 'data', 'smtp-url', 'email-from', 'tron-api-key'] as const;
        const booleans = { ask: { type: 'boolean' }, system: { type: 'boolean' } } as const;
        const { values } = parse('init', rest, { ...Object.fromEntries(flags.map((f) => [f, { type: 'string' }])), ...booleans });
        const v = values as Record<string, string | undefined>;
        const init = await cli.init();
        let options: import('./cli/init.js').InitOptions = {
          dir: v.dir,
          domain: v.domain,
          publicUrl: v['public-url'],
          listen: v.listen,
          data: v.data,
          smtpUrl: v['smtp-url'],
          emailFrom: v['email-from'],
          tronApiKey: v['tron-api-key'],
          system: values.system === true,
        };
        checked('init', () => init.checkInitOptions(options));
        if (values.ask === true || process.stdin.isTTY) {
          const asker = init.lineAsker();
          try {
            options = await init.askMissing(options, asker.ask);
          } finally {
            asker.close();
          }
        }
        return init.runInit(options, out);
      }
      case 'migrate': {
        const { values } = parse('migrate', rest, { config: { type: 'string' }, status: { type: 'boolean' } });
        return await (await cli.migrate()).runMigrate(loadConfig({ path: values.config as string | undefined }), values.status === true, out);
      }
      case 'serve': {
        const { values } = parse('serve', rest, { config: { type: 'string' }, listen: { type: 'string' } });
        return await (
          await cli.serve()
        ).runServe(loadConfig({ path: values.config as string | undefined, overrides: listenFlag('serve', values.listen as string | undefined) }));
      }
      case 'merchant': {
        const [sub, ...more] = rest;
        if (sub !== 'create') {
          wantsHelp('merchant create', rest);
          throw new ArgumentError(`unknown merchant command ${sub === undefined ? '(none)' : `"${sub}"`}; expected "merchant create"`, 'merchant create');
        }
        const { values } = parse('merchant create', more, { config: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } });
        const input = { email: values.email as string | undefined, name: values.name as string | undefined };
        const merchant: MerchantCli = await cli.merchant();
        checked('merchant create', () => merchant.checkMerchantArgs(input));
        const config = loadConfig({ path: values.config as string | undefined });
        return await merchant.runMerchantCreate(config, input, await merchant.readPassword({ confirm: true }), out);
      }
      case 'backup': {
        const { values, positionals } = parse('backup', rest, { config: { type: 'string' }, force: { type: 'boolean' } }, true);
        if (positionals.length !== 1) throw new ArgumentError('needs exactly one FILE', 'backup');
        const config = loadConfig({ path: values.config as string | undefined });
        return await (await cli.backup()).runBackup(config, { file: positionals[0]!, force: values.force === true, progress: process.stderr }, out);
      }
      case 'db': {
        const [sub, ...more] = rest;
        if (sub !== 'copy') {
          wantsHelp('db copy', rest);
          throw new ArgumentError(`unknown db command ${sub === undefined ? '(none)' : `"${sub}"`}; expected "db copy --to postgres://…"`, 'db copy');
        }
        const { values } = parse('db copy', more, { config: { type: 'string' }, to: { type: 'string' } });
        if (typeof values.to !== 'string') throw new ArgumentError('needs --to postgres://…', 'db copy');
        const to = values.to;
        const dbCopy = await cli.dbCopy();
        checked('db copy', () => dbCopy.checkCopyTarget(to));
        return await dbCopy.runDbCopy(loadConfig({ path: values.config as string | undefined }), to, out);
      }
      case 'chain': {
        const [sub, ...more] = rest;
        if (sub === 'status') {
          const { values } = parse('chain status', more, { config: { type: 'string' }, network: { type: 'string' } });
          return await (await cli.chain()).runChainStatus(loadConfig({ path: values.config as string | undefined }), out, values.network as string | undefined);
        }
        if (sub === 'rescan') {
          const { values } = parse('chain rescan', more, {
            config: { type: 'string' },
            network: { type: 'string' },
            'from-block': { type: 'string' },
            'from-time': { type: 'string' },
          });
          const from = { block: values['from-block'] as string | undefined, time: values['from-time'] as string | undefined };
          const chain = await cli.chain();
          checked('chain rescan', () => chain.checkRescanArgs(from));
          return await chain.runChainRescan(loadConfig({ path: values.config as string | undefined }), from, out, values.network as string | undefined);
        }
        throw new UsageError(
          `unknown chain command ${sub === undefined ? '(none)' : `"${sub}"`}; expected "chain status" or "chain rescan"\n${synopsisOf('chain status')}\n${synopsisOf('chain rescan')}`,
        );
      }
      case 'dev':
        return await dev(rest);
      case 'doctor': {
        const { values } = parse('doctor', rest, { config: { type: 'string' } });
        return await (await cli.doctor()).runDoctor(() => loadConfig({ path: values.config as string | undefined }), out);
      }
      default:
        throw new UsageError(`unknown command "${command}"; see gatewayd --help`);
    }
  } catch (err) {
    if (err instanceof HelpRequest) {
      process.stdout.write(usageOf(err.command));
      return 0;
    }
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof NetworkMismatchError) {
      process.stderr.write(`gatewayd: ${err.message}\n`);
      return 2;
    }
    // Every other failure (MigrationError, ServeError, BackupError, CopyError, ...): its message, exit 1.
    process.stderr.write(`gatewayd: ${(err as Error).message ?? String(err)}\n`);
    return 1;
  }
}

/**
 * The keys every `gatewayd dev` command sets over the configuration (the nodes' URLs come later;
 * the file's [[evm.networks]], [[solana.networks]] and [[ton.networks]] are replaced by the simulated
 * ones, so a real network there is no mix).
 */
const DEV_OVERRIDES = { tron: { network: 'devnet', api_url: 'http://127.0.0.1:1' }, evm: { networks: [] }, solana: { networks: [] }, ton: { networks: [] } };

/**
 * --amount is a USDT amount (up to six decimals), or with --network naming an EVM network a token
 * amount of up to 18 decimals (the instance checks the token's own): anything else is a usage
 * error (exit 2), before any request.
 */
function checkAmountFlag(amount: string | undefined, network: unknown, command: 'dev pay' | 'dev transfer'): void {
  // Solana's and TON's tokens have six decimals, as TRON's USDT.
  const evm = typeof network === 'string' && !/^(tron|solana|ton)-/.test(network);
  const decimals = evm ? 18 : 6;
  if (amount !== undefined && !new RegExp(`^(0|[1-9][0-9]{0,${evm ? 17 : 9}})(\\.[0-9]{1,${decimals}})?$`).test(amount)) {
    const example = evm ? 'a token amount such as 12.5 or 20.000137000000000001' : 'a USDT amount such as 12.5 or 20.000137';
    throw new ArgumentError(`--amount ${JSON.stringify(amount)} is not ${example}`, command);
  }
}

/** `gatewayd dev [...]`: the dev instance itself, or one of its client subcommands. */
async function dev(args: string[]): Promise<number> {
  const [sub, ...more] = args;
  const { callDev, devUrl, printAnswer, runDev } = await cli.dev();
  const merchant: MerchantCli = await cli.merchant();
  const common = { config: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' } } as const;
  const transferFlags = {
    ...common,
    network: { type: 'string' },
    token: { type: 'string' },
    from: { type: 'string' },
    'fake-token': { type: 'boolean' },
    failed: { type: 'boolean' },
  } as const;
  const client = (command: Command, values: Record<string, unknown>) => {
    const config = loadConfig({ path: values.config as string | undefined, overrides: DEV_OVERRIDES });
    return {
      base: checked(command, () => devUrl(config, values.url as string | undefined)),
      print: (answer: Record<string, unknown>) => printAnswer(answer, values.json === true, out),
    };
  };
  const transferBody = (values: Record<string, unknown>) => ({
    ...(values.network !== undefined ? { network: values.network } : {}),
    ...(values.token !== undefined ? { token: values.token } : {}),
    ...(values.from !== undefined ? { from: values.from } : {}),
    ...(values['fake-token'] === true ? { fake_token: true } : {}),
    ...(values.failed === true ? { failed: true } : {}),
  });
  switch (sub) {
    case 'pay': {
      const flags = { ...transferFlags, option: { type: 'string' }, amount: { type: 'string' }, late: { type: 'boolean' } } as const;
      const { values, positionals } = parse('dev pay', more, flags, true);
      if (positionals.length !== 1) throw new ArgumentError('needs exactly one INVOICE_ID', 'dev pay');
      checkAmountFlag(values.amount as string | undefined, values.network, 'dev pay');
      const option = values.option as string | undefined;
      if (option !== undefined && !/^[0-9]{1,2}$/.test(option))
        throw new ArgumentError(`--option ${JSON.stringify(option)} is not a position such as 0 or 1`, 'dev pay');
      const { base, print } = client('dev pay', values);
      const body = {
        invoice_id: positionals[0],
        ...(option !== undefined ? { option: Number(option) } : {}),
        ...(values.amount !== undefined ? { amount: values.amount } : {}),
        ...(values.late === true ? { late: true } : {}),
        ...transferBody(values),
      };
      print(await callDev(base, '/_dev/pay', body));
      return 0;
    }
    case 'transfer': {
      const { values } = parse('dev transfer', more, { ...transferFlags, to: { type: 'string' }, amount: { type: 'string' } });
      if (values.to === undefined || values.amount === undefined) throw new ArgumentError('needs --to ADDRESS and --amount A', 'dev transfer');
      checkAmountFlag(values.amount as string, values.network, 'dev transfer');
      const { base, print } = client('dev transfer', values);
      print(await callDev(base, '/_dev/transfer', { to: values.to, amount: values.amount, ...transferBody(values) }));
      return 0;
    }
    case 'merchant': {
      const [action, ...rest] = more;
      if (action !== 'create') {
        wantsHelp('dev merchant create', more);
        throw new ArgumentError(
          `unknown dev merchant command ${action === undefined ? '(none)' : `"${action}"`}; expected "dev merchant create"`,
          'dev merchant create',
        );
      }
      const { values } = parse('dev merchant create', rest, { ...common, email: { type: 'string' }, name: { type: 'string' } });
      const input = { email: values.email as string | undefined, name: values.name as string | undefined };
      checked('dev merchant create', () => merchant.checkMerchantArgs(input));
      const { base, print } = client('dev merchant create', values);
      print(
        await callDev(base, '/_dev/merchant', {
          email: input.email,
          ...(input.name !== undefined ? { name: input.name } : {}),
          password: await merchant.readPassword({ confirm: true }),
        }),
      );
      return 0;
    }
    default: {
      if (sub !== undefined && !sub.startsWith('-'))
        throw new ArgumentError(`unknown dev command "${sub}"; expected dev, dev pay, dev transfer or dev merchant create`, 'dev');
      const { values } = parse('dev', args, { config: { type: 'string' }, database: { type: 'string' }, listen: { type: 'string' } });
      const path = values.config as string | undefined;
      const listen = listenFlag('dev', values.listen as string | undefined);
      return runDev(
        // Section by section: dev's own `server` keys (a secret for the run) must not drop --listen's.
        (overrides) => loadConfig({ path, overrides: { ...listen, ...overrides, server: { ...listen.server, ...overrides.server } }, devMode: true }),
        values.database as string | undefined,
        (text) => process.stdout.write(`${text}\n`),
      );
    }
  }
}
