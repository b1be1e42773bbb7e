/**
 * A throwaway certificate authority for loopback TLS servers in tests (the HTTPS webhook receiver,
 * the SMTP server with STARTTLS). The gateway trusts it only where a test says so.
 */
import { randomBytes } from 'node:crypto';
import { generate } from 'selfsigned';

export interface TestCa {
  /** PEM of the CA certificate. */
  pem: string;
  /** A server certificate signed by this CA for DNS names and IP addresses. */
  issue(names: { dns?: string[]; ip?: string[] }): Promise<{ key: string; cert: string }>;
}

export async function makeTestCa(): Promise<TestCa> {
  // A distinct name per CA: OpenSSL picks an issuer by name, so two test CAs must not share one.
  const ca = await generate([{ name: 'commonName', value: `gatewayd test CA ${randomBytes(6).toString('hex')}` }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return {
    pem: ca.cert,
    async issue({ dns = [], ip = [] }) {
      const leaf = await generate([{ name: 'commonName', value: dns[0] ?? ip[0] ?? 'localhost' }], {
        keyType: 'ec',
        algorithm: 'sha256',
        ca: { key: ca.private, cert: ca.cert },
        extensions: [
          { name: 'basicConstraints', cA: false },
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
          { name: 'extKeyUsage', serverAuth: true },
          { name: 'subjectAltName', altNames: [...dns.map((value) => ({ type: 2 as const, value })), ...ip.map((ip) => ({ type: 7 as const, ip }))] },
        ],
      });
      return { key: leaf.private, cert: leaf.cert };
    },
  };
}
