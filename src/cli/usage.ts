/** A usage or configuration error: one line on stderr, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const HELP = `gatewayd: self-hosted, noncustodial USDT (TRC20) invoicing gateway

Usage:
  gatewayd serve [--config FILE]             run the API, console, checkout and workers
  gatewayd migrate [--config FILE] [--status] apply pending database migrations (or list them)
  gatewayd init [--dir DIR]                  write a commented gatewayd.toml and the data folder
  gatewayd merchant create --email E [--name N] [--config FILE]
                                             create a confirmed account; the password is read
                                             from stdin (first line), e.g. < password-file
  gatewayd backup FILE [--config FILE] [--force]
                                             consistent copy of the database while serving (0600);
                                             refuses to replace FILE without --force
                                             (PostgreSQL: pg_dump's custom format)
  gatewayd db copy --to postgres://… [--config FILE]
                                             copy the SQLite database into an empty PostgreSQL
                                             database, verifying counts and checksums per table
  gatewayd doctor [--config FILE]            check configuration, permissions, database, TRON API,
                                             clock and SMTP; exit 1 when a problem is found
  gatewayd dev [--config FILE] [--database FILE]
                                             the gateway on tron-devnet with a simulated TRON node
                                             on loopback (test network: no real money); a fresh
                                             temporary database unless --database names one
  gatewayd dev merchant create --email E [--name N] [--url URL]
                                             on a running dev instance: a confirmed account and an
                                             API key; the password is read from stdin
  gatewayd dev pay INVOICE_ID [--amount A] [--late] [--from ADDRESS] [--fake-token] [--failed] [--url URL]
                                             pay an invoice on the simulated chain (default: its
                                             exact payable amount, now)
  gatewayd dev transfer --to ADDRESS --amount A [--from ADDRESS] [--fake-token] [--failed] [--url URL]
                                             any transfer on the simulated chain
                                             (dev subcommands: --json prints the answer as JSON)
  gatewayd version                           print the version, and the Node.js and SQLite it runs on
  gatewayd --help                            this text

Configuration: --config FILE, else $GATEWAYD_CONFIG, else ./gatewayd.toml, else built-in defaults.
Any key can be overridden with GATEWAYD_<SECTION>_<KEY>, e.g. GATEWAYD_SERVER_LISTEN=0.0.0.0:8080.
Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
`;
