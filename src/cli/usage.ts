/** A usage or configuration error: one line on stderr (and the command's usage), exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command's arguments are wrong: the message, then that command's synopsis. */
export class ArgumentError extends UsageError {
  constructor(
    message: string,
    readonly command: Command,
  ) {
    super(`${command}: ${message}\n${synopsisOf(command)}`);
  }
}

/** `--help` or `-h` given to a command: its usage on stdout, exit code 0. */
export class HelpRequest extends Error {
  constructor(readonly command: Command) {
    super(`help for ${command}`);
    this.name = 'HelpRequest';
  }
}

/** Each command's usage line(s) and description, in the order `gatewayd --help` lists them. */
const COMMANDS = {
  serve: ['gatewayd serve [--config FILE] [--listen HOST:PORT]', 'run the API, console, checkout and workers (--listen: server.listen for this run)'],
  migrate: ['gatewayd migrate [--config FILE] [--status]', 'apply pending database migrations (or list them)'],
  init: [
    'gatewayd init [--dir DIR] [--domain D | --public-url URL] [--listen H:P] [--data DIR] [--smtp-url URL] [--email-from F] [--tron-api-key K] [--system] [--ask]',
    'write a commented gatewayd.toml, the data folder and a systemd unit; with --domain also a Caddyfile (HTTPS with an automatic certificate); --system: for the layout install.sh installs. On a terminal (or with --ask) it asks for what the flags left out',
  ],
  'merchant create': [
    'gatewayd merchant create --email E [--name N] [--config FILE]',
    'create a confirmed account; the password is read from stdin (first line), e.g. <password-file; on a terminal it is asked twice, without echo',
  ],
  backup: [
    'gatewayd backup FILE [--config FILE] [--force]',
    'consistent copy of the database while serving (0600); refuses to replace FILE without --force (PostgreSQL: pg_dump custom format)',
  ],
  'db copy': [
    'gatewayd db copy --to postgres://… [--config FILE]',
    'copy the SQLite database into an empty PostgreSQL database, verifying counts and checksums per table',
  ],
  doctor: ['gatewayd doctor [--config FILE]', 'check configuration, permissions, database, TRON API, clock and SMTP; exit 1 when a problem is found'],
  'chain status': [
    'gatewayd chain status [--network ID] [--config FILE]',
    "per network watched (or the one named): the watcher's cursor, unread ranges and open disputes (from the database), and from the running server each provider's health",
  ],
  'chain rescan': [
    'gatewayd chain rescan [--network ID] --from-block N | --from-time T [--config FILE]',
    're-read the blocks from N (or time T, ISO 8601) of the TRON network, or of the network named, while serving; what is already recorded is not recorded again',
  ],
  dev: [
    'gatewayd dev [--config FILE] [--database FILE] [--listen HOST:PORT]',
    'the gateway on tron-devnet with a simulated TRON node on loopback, and beside it the simulated EVM devnets (ethereum-, bsc-, polygon-, arbitrum-, base-devnet), solana-devnet (a JSON-RPC node) and ton-devnet (a toncenter v3 index) (test networks: no real money); a fresh temporary database unless --database names one',
  ],
  'dev merchant create': [
    'gatewayd dev merchant create --email E [--name N] [--url URL] [--json]',
    'on a running dev instance: a confirmed account and an API key; the password is read from stdin',
  ],
  'dev pay': [
    'gatewayd dev pay INVOICE_ID [--option K | --network N [--token T]] [--amount A] [--late] [--from ADDRESS] [--fake-token] [--failed] [--url URL] [--json]',
    "pay an invoice on its own simulated chain and token, or the option named (default: its exact payable amount, now, with the option's Solana Pay reference or TON comment; --late: in a block sealed just after the invoice expired, not on solana-devnet or ton-devnet; --amount takes up to 18 decimals with --network on an 18-decimal token)",
  ],
  'dev transfer': [
    'gatewayd dev transfer [--network N] [--token T] --to ADDRESS --amount A [--from ADDRESS] [--fake-token] [--failed] [--url URL] [--json]',
    'any transfer on a simulated chain (default tron-devnet and USDT; EVM addresses in EIP-55 or lower case; on solana-devnet to an owner, into its token account; on ton-devnet to an owner, raw or user-friendly)',
  ],
  version: ['gatewayd version', 'print the version, and the Node.js and SQLite it runs on'],
} as const;

export type Command = keyof typeof COMMANDS;

/** Every command, in the order `gatewayd --help` lists them. */
export const COMMAND_NAMES = Object.keys(COMMANDS) as Command[];

/** Wraps a description to the right-hand column of the help text. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

const COLUMN = 45;

function entry(command: Command): string {
  const [synopsis, description] = COMMANDS[command];
  const text = wrap(description, 48);
  const pad = ' '.repeat(COLUMN);
  const first = `  ${synopsis}`;
  const head = first.length < COLUMN ? [`${first.padEnd(COLUMN)}${text[0]}`] : [first, `${pad}${text[0]}`];
  return [...head, ...text.slice(1).map((l) => `${pad}${l}`)].join('\n');
}

const FOOTER = `Configuration: --config FILE, else $GATEWAYD_CONFIG, else ./gatewayd.toml, else built-in defaults.
Any key can be overridden with GATEWAYD_<SECTION>_<KEY>, e.g. GATEWAYD_SERVER_LISTEN=0.0.0.0:8080
(server.public_url follows server.listen unless it is set).
Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
`;

export const HELP = `gatewayd: self-hosted, noncustodial USDT (TRC20) invoicing gateway

Usage:
${COMMAND_NAMES.map(entry).join('\n')}
  ${'gatewayd COMMAND --help'.padEnd(COLUMN - 2)}that command's usage (-h works too)

${FOOTER}`;

/** One command's usage, as `gatewayd COMMAND --help` prints it. */
export function usageOf(command: Command): string {
  const [synopsis, description] = COMMANDS[command];
  return `Usage: ${synopsis}\n\n${wrap(description, 76)
    .map((l) => `  ${l}\n`)
    .join('')}\n${FOOTER}`;
}

/** The short form appended to a usage error: the command's synopsis and where to read more. */
export function synopsisOf(command: Command): string {
  return `usage: ${COMMANDS[command][0]} (gatewayd ${command} --help for more)`;
}
