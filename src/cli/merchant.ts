/**
 * `gatewayd merchant create --email E [--name N] [--config FILE]`: creates a confirmed account so an
 * operator can start without mail. The password is read from stdin (first line), never from argv,
 * where it would show in the process list and the shell history; on a terminal it is not echoed.
 */
import type { Config } from '../config.js';
import { defaultName } from '../accounts/auth.service.js';
import { emailAddress } from '../lib/email-address.js';
import { findMerchantByEmail, insertMerchant, normalizeEmail, type Merchant } from '../accounts/merchants.repo.js';
import { hashPassword } from '../accounts/passwords.js';
import { ensureDatabaseFile, openDatabase, writeTransaction, type Db } from '../db/database.js';
import { configuredClaim, prepareDatabase } from '../db/network-guard.js';
import { UsageError } from './usage.js';

export class MerchantCommandError extends Error {}

const emailSchema = emailAddress();

/** One line typed on a terminal without echo, after a prompt on stderr. */
async function typeHidden(stdin: NodeJS.ReadStream, prompt: string): Promise<string> {
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') {
            stdin.off('data', onData);
            process.stderr.write('\n');
            return resolve(typed);
          }
          if (ch === '\u0003') {
            stdin.off('data', onData);
            return reject(new UsageError('interrupted'));
          }
          typed = ch === '\u007f' || ch === '\b' ? [...typed].slice(0, -1).join('') : typed + ch;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
  }
}

/**
 * The first line of stdin; on a terminal, typed without echo after a prompt on stderr, and with
 * `confirm` typed a second time (a typo in a password nobody sees would lock the account out).
 */
export async function readPassword(options: { confirm?: boolean; stdin?: NodeJS.ReadStream } = {}): Promise<string> {
  const stdin = options.stdin ?? process.stdin;
  if (stdin.isTTY) {
    const password = await typeHidden(stdin, 'Password (12 to 128 characters): ');
    if (options.confirm && password !== (await typeHidden(stdin, 'The same password again: ')))
      throw new UsageError('merchant create: the two passwords differ; nothing was created');
    return password;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

/** Argument checks, done before waiting on stdin so a typo fails at once. */
export function checkMerchantArgs(input: {
  email: string | undefined;
  name: string | undefined;
}): asserts input is { email: string; name: string | undefined } {
  if (!input.email) throw new UsageError('--email is required');
  if (!emailSchema.safeParse(input.email.trim()).success) throw new UsageError(`--email ${JSON.stringify(input.email)} is not an email address`);
  if (input.name !== undefined && (input.name.trim() === '' || input.name.length > 100)) throw new UsageError('--name must be 1 to 100 characters');
}

/** The password rule of `merchant create`, as a message; undefined when it holds. */
export function passwordProblem(password: string): string | undefined {
  return password.length < 12 || password.length > 128 ? `the password must be 12 to 128 characters (got ${password.length})` : undefined;
}

/** A confirmed account (no mail needed); undefined when the email already has one. */
export async function createConfirmedMerchant(
  db: Db,
  input: { email: string; name: string | undefined },
  password: string,
  now: number,
): Promise<Merchant | undefined> {
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(password);
  return writeTransaction(db, async (trx) => {
    if (await findMerchantByEmail(trx, email)) return undefined;
    return insertMerchant(trx, { email, name: defaultName(email, input.name), passwordHash, emailVerifiedAt: now }, now);
  });
}

export async function runMerchantCreate(
  config: Config,
  input: { email: string | undefined; name: string | undefined },
  password: string,
  out: (line: string) => void,
): Promise<number> {
  checkMerchantArgs(input);
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(`merchant create: ${problem.replace('the password', 'the password read from stdin')}`);

  const created = !config.database.url && ensureDatabaseFile(config.database.path);
  const database = openDatabase(config.database);
  try {
    await prepareDatabase(database, database.path, configuredClaim(config), created, Date.now());
    const merchant = await createConfirmedMerchant(database.db, input, password, Date.now());
    if (!merchant)
      throw new MerchantCommandError(`an account with the email ${normalizeEmail(input.email)} already exists (use "forgot password" to set a new password)`);
    out(`created merchant ${merchant.id} <${merchant.email}> "${merchant.name}", email confirmed`);
    out(`sign in at ${config.server.public_url.replace(/\/+$/, '')}/login`);
    return 0;
  } finally {
    await database.close();
  }
}
