import * as tls from 'node:tls';
import { PORTS } from '../contract/contract';

/** Where and how to make the TLS handshake of 4.2. */
export interface TlsCheckOptions {
  /** The environment's host: sent as the server name (SNI) and checked against the certificate. */
  readonly host: string;
  /**
   * Address to connect to.
   * @default - `host`
   */
  readonly address?: string;
  /**
   * TCP port.
   * @default 443
   */
  readonly port?: number;
  /**
   * PEM certificates to trust instead of Node's bundled roots (a local CA).
   * @default - Node's bundled root certificates
   */
  readonly ca?: string;
  /**
   * Report an untrusted chain instead of failing (ACME staging issuers are untrusted by design).
   * @default false
   */
  readonly allowUntrusted?: boolean;
}

/** What the handshake showed. */
export interface CertificateReport {
  /** `CN=webapp.testing.platform.example.com`. */
  readonly subject: string;
  readonly issuer: string;
  /** Expiry, ISO 8601. */
  readonly validTo: string;
  /** Whole days until expiry (negative once expired). */
  readonly daysLeft: number;
  /** Whether the chain verified against the trusted roots. */
  readonly trusted: boolean;
  /** Why it did not verify, when it did not. */
  readonly trustError?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function distinguishedName(name: tls.Certificate | undefined): string {
  if (name === undefined) return '(none)';
  return Object.entries(name)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : String(value)}`)
    .join(', ');
}

/**
 * A TLS handshake with the server name set (4.2). Fails on a handshake error, a certificate
 * that does not name the host, one outside its validity period, or (unless allowed) one
 * whose chain does not verify.
 */
export function checkTls(options: TlsCheckOptions, signal: AbortSignal, now: Date = new Date()): Promise<CertificateReport> {
  return new Promise<CertificateReport>((resolve, reject) => {
    const socket = tls.connect({
      host: options.address ?? options.host,
      port: options.port ?? PORTS.https,
      servername: options.host,
      // Verification happens below, so that the report can say what was wrong.
      rejectUnauthorized: false,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    });
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    signal.addEventListener('abort', () => fail(signal.reason instanceof Error ? signal.reason : new Error('aborted')), { once: true });
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      if (certificate === undefined || Object.keys(certificate).length === 0) {
        reject(new Error('the server sent no certificate'));
        return;
      }
      const validTo = new Date(certificate.valid_to);
      const validFrom = new Date(certificate.valid_from);
      const report: CertificateReport = {
        subject: distinguishedName(certificate.subject),
        issuer: distinguishedName(certificate.issuer),
        validTo: validTo.toISOString(),
        daysLeft: Math.floor((validTo.getTime() - now.getTime()) / DAY_MS),
        trusted: socket.authorized,
        ...(socket.authorized ? {} : { trustError: String(socket.authorizationError) }),
      };
      const mismatch = tls.checkServerIdentity(options.host, certificate);
      if (mismatch !== undefined) reject(new Error(`certificate ${report.subject} does not name ${options.host}: ${mismatch.message}`));
      else if (now < validFrom) reject(new Error(`certificate ${report.subject} is not valid before ${validFrom.toISOString()}`));
      else if (now > validTo) reject(new Error(`certificate ${report.subject} expired on ${report.validTo}`));
      else if (!report.trusted && !options.allowUntrusted) {
        reject(new Error(`certificate ${report.subject} (issuer ${report.issuer}) is not trusted: ${report.trustError}`));
      } else resolve(report);
    });
  });
}

/** `subject CN=..., expires 2026-...Z (89 days)`, plus the trust note when untrusted. */
export function describeCertificate(report: CertificateReport): string {
  const trust = report.trusted ? '' : `; untrusted (${report.trustError}), allowed by --allow-untrusted`;
  return `subject ${report.subject}, issuer ${report.issuer}, expires ${report.validTo} (${report.daysLeft} days)${trust}`;
}
