import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Media types of a Helm chart stored in an OCI registry (helm.sh/docs/topics/registries). */
const MEDIA = {
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.cncf.helm.config.v1+json',
  chart: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
} as const;

interface Blob {
  readonly digest: string;
  readonly body: Buffer;
}

const blobOf = (body: Buffer): Blob => ({ digest: `sha256:${crypto.createHash('sha256').update(body).digest('hex')}`, body });

/**
 * A read-only OCI registry (the distribution API's pull side) for stand-in Helm charts:
 * `GET /v2/`, manifests by tag or digest, blobs, tags list; anonymous. Enough for
 * `helm pull oci://...` and Argo CD's tag listing.
 */
export class OciChartRegistry {
  private readonly manifests = new Map<string, Blob>(); // `<repository>:<tag or digest>`
  private readonly blobs = new Map<string, Blob>();
  private readonly tags = new Map<string, string[]>();

  /** Publish a packaged chart (`helm package` output) as `<repository>:<version>`. */
  add(repository: string, chart: { name: string; version: string }, tgz: string): void {
    const layer = blobOf(fs.readFileSync(tgz));
    const config = blobOf(Buffer.from(JSON.stringify({ name: chart.name, version: chart.version, apiVersion: 'v2' })));
    const manifest = blobOf(
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: MEDIA.manifest,
          config: { mediaType: MEDIA.config, digest: config.digest, size: config.body.length },
          layers: [{ mediaType: MEDIA.chart, digest: layer.digest, size: layer.body.length }],
        }),
      ),
    );
    for (const blob of [layer, config]) this.blobs.set(blob.digest, blob);
    this.manifests.set(`${repository}:${chart.version}`, manifest);
    this.manifests.set(`${repository}:${manifest.digest}`, manifest);
    this.tags.set(repository, [...(this.tags.get(repository) ?? []), chart.version].sort());
  }

  /** Answer a request if it is a registry request; false when it is not one. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'https://registry');
    if (!url.pathname.startsWith('/v2/')) return false;
    const head = req.method === 'HEAD';
    const send = (status: number, type: string, body: Buffer, digest?: string): void => {
      res.writeHead(status, {
        'content-type': type,
        'content-length': body.length,
        'docker-distribution-api-version': 'registry/2.0',
        ...(digest ? { 'docker-content-digest': digest } : {}),
      });
      res.end(head ? undefined : body);
    };
    const notFound = (): void => send(404, 'application/json', Buffer.from(JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN', message: 'not found' }] })));
    if (url.pathname === '/v2/') {
      send(200, 'application/json', Buffer.from('{}'));
      return true;
    }
    const match = /^\/v2\/(.+)\/(manifests|blobs|tags)\/(.+)$/.exec(url.pathname);
    if (!match) return notFound(), true;
    const [, repository, kind, reference] = match as unknown as [string, string, string, string];
    if (kind === 'tags' && reference === 'list') {
      const tags = this.tags.get(repository);
      if (!tags) return notFound(), true;
      send(200, 'application/json', Buffer.from(JSON.stringify({ name: repository, tags })));
    } else if (kind === 'manifests') {
      const manifest = this.manifests.get(`${repository}:${reference}`);
      if (!manifest) return notFound(), true;
      send(200, MEDIA.manifest, manifest.body, manifest.digest);
    } else if (kind === 'blobs') {
      const blob = this.blobs.get(reference);
      if (!blob) return notFound(), true;
      send(200, 'application/octet-stream', blob.body, blob.digest);
    } else {
      notFound();
    }
    return true;
  }
}
