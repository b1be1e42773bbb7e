import { createCipheriv, createDecipheriv, createHmac, hash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * `bytes` random bytes as base64url (32 bytes = 43 characters), from a CSPRNG call of their own: for
 * secrets (sessions, API keys, webhook secrets, reset and email tokens), so that no secret not yet
 * issued waits in a pool in memory. Ids and checkout tokens come from one (src/lib/random.ts).
 */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 as hex, by Node's one-shot hash (a quarter faster than createHash for short inputs; Node 21.7 and later). */
export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex');
}

export function hmacSha256Hex(key: string | Buffer, value: string | Buffer): string {
  return createHmac('sha256', key).update(value).digest('hex');
}

/** Constant-time comparison of two strings (false on different lengths, without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/**
 * AES-256-GCM with a key derived from the server secret for one purpose (HKDF-SHA256), for what
 * may be kept only encrypted (a replayable answer holding a secret shown once). The sealed text is
 * base64url of iv (12 bytes), tag (16) and ciphertext.
 */
export function sealWithServerSecret(serverSecret: string, purpose: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', purposeKey(serverSecret, purpose), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The plaintext, or undefined when the text was sealed under another secret or purpose, or altered. */
export function openWithServerSecret(serverSecret: string, purpose: string, sealed: string): string | undefined {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', purposeKey(serverSecret, purpose), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

function purposeKey(serverSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(serverSecret, 'utf8'), Buffer.alloc(0), `gatewayd ${purpose}`, 32));
}
