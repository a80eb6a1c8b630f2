import * as fs from 'node:fs';
import * as path from 'node:path';
import { run } from './processes';

/** A certificate and its key, as PEM files. */
export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

/** Everything the control plane and the stand-in servers need, generated per run. */
export interface ClusterPki {
  /** The cluster CA: signs the API server, clients and the stand-in chart server. */
  readonly ca: KeyPair;
  /** The API server's serving certificate (127.0.0.1, localhost, kubernetes.default.svc). */
  readonly apiserver: KeyPair;
  /** The administrator's client certificate (group system:masters). */
  readonly admin: KeyPair;
  /** Service-account token signing key (private) and its public half. */
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
}

/**
 * Generate a CA and leaf certificates with openssl (Debian's), on loopback names only.
 * Keys are EC P-256: quick to make and accepted by every Go TLS stack involved.
 */
export class Pki {
  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private file(name: string): string {
    return path.join(this.dir, name);
  }

  private key(name: string): string {
    const key = this.file(`${name}.key`);
    run('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
    return key;
  }

  ca(name: string, subject: string): KeyPair {
    const key = this.key(name);
    const cert = this.file(`${name}.crt`);
    run('openssl', ['req', '-x509', '-new', '-key', key, '-subj', subject, '-days', '2', '-out', cert,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return { cert, key };
  }

  /** A leaf certificate signed by `ca`, for servers (`dnsNames`/`ips`) or clients. */
  leaf(name: string, ca: KeyPair, subject: string, usage: 'server' | 'client', dnsNames: readonly string[] = [], ips: readonly string[] = []): KeyPair {
    const key = this.key(name);
    const csr = this.file(`${name}.csr`);
    const cert = this.file(`${name}.crt`);
    const ext = this.file(`${name}.ext`);
    const sans = [...dnsNames.map((d) => `DNS:${d}`), ...ips.map((ip) => `IP:${ip}`)];
    fs.writeFileSync(
      ext,
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        `extendedKeyUsage=${usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
        ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
      ].join('\n'),
    );
    run('openssl', ['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
    run('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', cert]);
    return { cert, key };
  }

  cluster(): ClusterPki {
    const ca = this.ca('ca', '/CN=platform-gitops-e2e-ca');
    const apiserver = this.leaf('apiserver', ca, '/CN=kube-apiserver', 'server',
      ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'], ['127.0.0.1']);
    const admin = this.leaf('admin', ca, '/O=system:masters/CN=platform-gitops-e2e-admin', 'client');
    const serviceAccountKey = this.file('service-account.key');
    const serviceAccountPub = this.file('service-account.pub');
    run('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', serviceAccountKey]);
    run('openssl', ['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub]);
    return { ca, apiserver, admin, serviceAccountKey, serviceAccountPub };
  }
}
