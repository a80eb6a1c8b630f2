/**
 * Every container image the platform names, besides the application's own (the values
 * files name those) and the ones the upstream charts bring (their charts pin them; the
 * charts are pinned in src/infrastructure/releases.ts). Each is pinned to an exact tag its
 * upstream publishes, so no rendered image is one that nothing builds (test/images.test.ts).
 */
export const IMAGES = {
  /**
   * SQL Server (1.3 step 5): Microsoft's image at a pinned cumulative update, so a database
   * engine upgrade is a reviewed change here.
   */
  sqlServer: 'mcr.microsoft.com/mssql/server:2022-CU16-ubuntu-22.04',
  /**
   * The sops Config Management Plugin's sidecar (5.3): upstream's image (ghcr.io/getsops/sops,
   * `-alpine` for the shell), the sops version toolchain/build.sh builds for the e2e.
   */
  sops: 'ghcr.io/getsops/sops:v3.13.3-alpine',
  /** busybox (Docker official image): the smoke hook's HTTP steps (`wget`) and its last line. */
  busybox: 'busybox:1.36.1',
  /**
   * Strimzi's Kafka image, the one Strimzi 1.2.0 runs the brokers with by default
   * (strimzi-kafka-operator 1.2.0 packaging/install/cluster-operator/
   * 060-Deployment-strimzi-cluster-operator.yaml): the smoke hook's broker step.
   */
  strimziKafka: 'quay.io/strimzi/kafka:1.2.0-kafka-4.3.1',
} as const;
