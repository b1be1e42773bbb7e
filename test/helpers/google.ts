/**
 * A loopback stand-in for Google's identity provider: an RSA key pair made in the test, its JWKS
 * served over http, and ID tokens signed with it. The JWKS endpoint can be made to fail.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

export const GOOGLE_CLIENT_ID = 'test-client.apps.googleusercontent.com';
export const GOOGLE_ISSUER = 'https://accounts.google.com';

export interface IdTokenOptions {
  /** Seconds since the epoch the token is issued at (default: now per `nowMs`). */
  nowMs: number;
  lifetimeSeconds?: number;
  issuer?: string;
  audience?: string;
  /** Sign with a key that is not in the JWKS. */
  foreignKey?: boolean;
  kid?: string;
}

export interface GoogleStub {
  jwksUrl: string;
  /** 'ok' serves the keys; '500' answers an error; 'garbage' answers non-JSON. */
  mode: 'ok' | '500' | 'garbage';
  /** Number of JWKS requests served. */
  readonly fetches: number;
  idToken(claims: JWTPayload, options: IdTokenOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startGoogle(): Promise<GoogleStub> {
  const kid = 'test-key-1';
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  let fetches = 0;
  const server = createServer((_req, res) => {
    fetches += 1;
    if (stub.mode === '500') {
      res.writeHead(500);
      res.end('unavailable');
    } else if (stub.mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{not json');
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=3600' });
      res.end(JSON.stringify({ keys: [jwk] }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const stub: GoogleStub = {
    jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth2/v3/certs`,
    mode: 'ok',
    get fetches() {
      return fetches;
    },
    async idToken(claims, options) {
      const iat = Math.floor(options.nowMs / 1000);
      const key: CryptoKey = options.foreignKey ? foreign.privateKey : privateKey;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? kid, typ: 'JWT' })
        .setIssuer(options.issuer ?? GOOGLE_ISSUER)
        .setAudience(options.audience ?? GOOGLE_CLIENT_ID)
        .setIssuedAt(iat)
        .setExpirationTime(iat + (options.lifetimeSeconds ?? 3600))
        .sign(key);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return stub;
}
