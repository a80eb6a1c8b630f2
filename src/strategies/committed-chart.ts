import { loadAll } from 'js-yaml';

/**
 * A chart as committed (`dist/<env>/<application>.yaml`), read back as objects: what a
 * strategy's step checks compare a change with. Only the kinds and fields those checks read
 * are modelled, each checked as it is read; anything else in a document is passed over.
 */

/** A Service of the committed chart: whom it selects. */
export interface CommittedService {
  readonly name: string;
  /** `spec.selector`: label -> value (empty when it selects nothing). */
  readonly selector: Readonly<Record<string, string>>;
}

/** A Deployment of the committed chart: its pods' containers. */
export interface CommittedDeployment {
  readonly name: string;
  /** `spec.template.spec.containers`: each container's name and image reference. */
  readonly containers: readonly { readonly name: string; readonly image: string }[];
}

type Fields = Readonly<Record<string, unknown>>;

function fields(value: unknown): Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : {};
}

function strings(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(fields(value)).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function containersOf(deployment: Fields): CommittedDeployment['containers'] {
  const containers = fields(fields(fields(deployment['spec'])['template'])['spec'])['containers'];
  return (Array.isArray(containers) ? containers : []).flatMap((container: unknown) => {
    const { name, image } = fields(container);
    return typeof name === 'string' && typeof image === 'string' ? [{ name, image }] : [];
  });
}

export class CommittedChart {
  /**
   * The Services and Deployments of a committed chart's text, by name.
   * @throws js-yaml's YAMLException when the text does not read as YAML
   */
  static parse(text: string): CommittedChart {
    const services = new Map<string, CommittedService>();
    const deployments = new Map<string, CommittedDeployment>();
    for (const document of loadAll(text)) {
      const object = fields(document);
      const name = fields(object['metadata'])['name'];
      if (typeof name !== 'string') continue;
      if (object['kind'] === 'Service') services.set(name, { name, selector: strings(fields(object['spec'])['selector']) });
      else if (object['kind'] === 'Deployment') deployments.set(name, { name, containers: containersOf(object) });
    }
    return new CommittedChart(services, deployments);
  }

  private constructor(
    private readonly services: ReadonlyMap<string, CommittedService>,
    private readonly deployments: ReadonlyMap<string, CommittedDeployment>,
  ) {}

  /** The Service `name`, if the chart has it. */
  service(name: string): CommittedService | undefined {
    return this.services.get(name);
  }

  /** The Deployment `name`, if the chart has it. */
  deployment(name: string): CommittedDeployment | undefined {
    return this.deployments.get(name);
  }
}
