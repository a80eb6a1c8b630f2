import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { DATABASE, POLICY_EXEMPTION_PREFIX } from '../contract/choices';
import { PORTS, WAITS_SECONDS } from '../contract/contract';
import { IMAGES } from '../contract/images';
import { restrictedContainer, restrictedPod } from '../contract/security-context';
import type { Resources } from '../environments';
import { resourceRequirements } from './resource-requirements';

/** A persistent volume: its StorageClass and size. */
export interface VolumeRequest {
  readonly storageClass: string;
  readonly size: string;
}

export interface SqlServerProps {
  /** The server's own namespace. */
  readonly namespace: string;
  /** MSSQL_PID: the edition. */
  readonly edition: string;
  /** Requests and limits of the server container. */
  readonly resources: Resources;
  /** The data volume (volume claim template of the StatefulSet). */
  readonly storage: VolumeRequest;
  /** The dedicated backup volume, mounted at DATABASE.backupPath. */
  readonly backupStorage: VolumeRequest;
  /**
   * Name of the StatefulSet, its Service and pod label `app`.
   * @default DATABASE.serverName
   */
  readonly name?: string;
}

/**
 * Runs a query through sqlcmd as the administrator. The password goes from the pod's
 * environment to sqlcmd's (SQLCMDPASSWORD), never onto its command line, which any process
 * of the node may read (ps).
 */
export function sqlcmdShell(query: string, server = 'localhost'): string[] {
  return ['/bin/sh', '-c', `SQLCMDPASSWORD="$MSSQL_SA_PASSWORD" ${DATABASE.sqlcmd} -S ${server} -U ${DATABASE.administrator} -C -b -Q "${query}"`];
}

/** The administrator password from its Secret, as the server and the jobs read it (5.4). */
export const ADMIN_PASSWORD_ENV: k8s.EnvVar = {
  name: 'MSSQL_SA_PASSWORD',
  valueFrom: { secretKeyRef: { name: DATABASE.adminSecret.name, key: DATABASE.adminSecret.key } },
};

/** The restricted container security context of every database container. */
export function databaseSecurityContext(readOnlyRootFilesystem: boolean): k8s.SecurityContext {
  return { ...restrictedContainer(DATABASE.user, DATABASE.user), readOnlyRootFilesystem };
}

/** The container of a database job: what it runs, with which variables and resources. */
export interface SqlcmdContainer {
  readonly name: string;
  readonly command: string[];
  readonly env: k8s.EnvVar[];
  readonly resources: k8s.ResourceRequirements;
}

/**
 * The pod of a job that talks to the server with sqlcmd: the server's own image (the same
 * sqlcmd, no second image to pin), run once, restricted, without an API token.
 */
export function sqlcmdJobPod(labels: Readonly<Record<string, string>>, container: SqlcmdContainer): k8s.PodTemplateSpec {
  return {
    metadata: { labels: { ...labels } },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: restrictedPod({ user: DATABASE.user }),
      containers: [{ ...container, image: IMAGES.sqlServer, securityContext: databaseSecurityContext(true) }],
    },
  };
}

/**
 * SQL Server (1.3 step 5) as a StatefulSet with its data volume claim template, a Service on
 * 1433, and the backup volume the server writes full backups to. Ready means the server
 * answers a query (the in-cluster form of "the log says SQL Server is now ready", 3.1); the
 * startup probe allows the 600 s the contract waits for the database pod.
 */
export class SqlServer extends Construct {
  /** The StatefulSet. */
  public readonly statefulSet: k8s.KubeStatefulSet;
  /** The Service on 1433. */
  public readonly service: k8s.KubeService;
  /** Labels of the server pods. */
  public readonly podLabels: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: SqlServerProps) {
    super(scope, id);
    const name = props.name ?? DATABASE.serverName;
    const podLabels = { app: name };
    this.podLabels = podLabels;
    const metadata = (objectName: string) => ({ name: objectName, namespace: props.namespace, labels: { ...podLabels } });
    const backupClaim = `${name}-backup`;
    const { periodSeconds, timeoutSeconds } = DATABASE.probe;
    const answersQuery = { exec: { command: sqlcmdShell('SELECT 1') }, periodSeconds, timeoutSeconds };

    new k8s.KubePersistentVolumeClaim(this, 'backup-claim', {
      metadata: metadata(backupClaim),
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: props.backupStorage.storageClass,
        resources: { requests: { storage: k8s.Quantity.fromString(props.backupStorage.size) } },
      },
    });

    this.service = new k8s.KubeService(this, 'service', {
      metadata: metadata(name),
      spec: {
        selector: { ...podLabels },
        ports: [{ name: DATABASE.portName, port: PORTS.database, targetPort: k8s.IntOrString.fromNumber(PORTS.database), protocol: 'TCP' }],
      },
    });

    this.statefulSet = new k8s.KubeStatefulSet(this, 'server', {
      metadata: {
        ...metadata(name),
        annotations: {
          [`${POLICY_EXEMPTION_PREFIX}read-only-root-filesystem`]:
            'SQL Server writes below /var/opt/mssql and to its own files outside the data volume at start-up; it cannot run read-only',
        },
      },
      spec: {
        serviceName: name,
        replicas: 1,
        selector: { matchLabels: { ...podLabels } },
        template: {
          metadata: { labels: { ...podLabels } },
          spec: {
            automountServiceAccountToken: false,
            securityContext: restrictedPod({ user: DATABASE.user, group: DATABASE.user, fsGroup: DATABASE.user }),
            containers: [
              {
                name,
                image: IMAGES.sqlServer,
                ports: [{ name: DATABASE.portName, containerPort: PORTS.database, protocol: 'TCP' }],
                env: [
                  { name: 'ACCEPT_EULA', value: 'Y' },
                  { name: 'MSSQL_PID', value: props.edition },
                  ADMIN_PASSWORD_ENV,
                ],
                resources: resourceRequirements(props.resources),
                startupProbe: { ...answersQuery, failureThreshold: WAITS_SECONDS.databasePodReady / periodSeconds },
                readinessProbe: { ...answersQuery, failureThreshold: 3 },
                livenessProbe: {
                  tcpSocket: { port: k8s.IntOrString.fromNumber(PORTS.database) },
                  periodSeconds,
                  timeoutSeconds,
                  failureThreshold: 3,
                },
                securityContext: databaseSecurityContext(false),
                volumeMounts: [
                  { name: 'data', mountPath: DATABASE.dataPath },
                  { name: 'backup', mountPath: DATABASE.backupPath },
                ],
              },
            ],
            volumes: [{ name: 'backup', persistentVolumeClaim: { claimName: backupClaim } }],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: props.storage.storageClass,
              resources: { requests: { storage: k8s.Quantity.fromString(props.storage.size) } },
            },
          },
        ],
      },
    });
  }
}
