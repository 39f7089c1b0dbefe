import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TlsFiles {
  cert: string;
  key: string;
  /** Set when the certificate was made here: clients must be told to trust it. */
  selfSigned: boolean;
}

/**
 * The given certificate, or the self-signed one of the data directory, made on first use
 * for localhost and 127.0.0.1 and reused afterwards.
 */
export async function ensureCertificate(
  dataDir: string,
  given?: { cert: string; key: string },
): Promise<TlsFiles> {
  if (given) return { ...given, selfSigned: false };
  const dir = join(dataDir, 'tls');
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  if (!existsSync(cert) || !existsSync(key)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const notAfterDate = new Date();
    notAfterDate.setFullYear(notAfterDate.getFullYear() + 10);
    // Loaded only here, at the first start: the library and its ASN.1 modules cost every start
    // tens of milliseconds otherwise.
    const { generate } = await import('selfsigned');
    const pair = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    });
    writeFileSync(key, pair.private, { mode: 0o600 });
    writeFileSync(cert, pair.cert, { mode: 0o644 });
  }
  return { cert, key, selfSigned: true };
}

export function readTls(files: TlsFiles): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(files.cert), key: readFileSync(files.key) };
}
