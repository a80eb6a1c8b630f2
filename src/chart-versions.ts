/**
 * Container images the platform runs besides the application's own and the upstream charts'
 * (the charts are pinned in src/infrastructure/releases.ts), each pinned to an exact tag and
 * each one its upstream publishes (convergence item 12: no rendered image that nothing builds). The sops plugin's image is SOPS_PLUGIN.image (src/constants.ts).
 * - busybox (Docker official image): the smoke hook's HTTP steps (`wget`) and its last line.
 * - Strimzi's Kafka image, the one Strimzi 1.2.0 runs the brokers with by default
 *   (strimzi-kafka-operator 1.2.0 packaging/install/cluster-operator/
 *   060-Deployment-strimzi-cluster-operator.yaml): the smoke hook's broker step.
 */
export const TOOL_IMAGES = {
  busybox: 'busybox:1.36.1',
  strimziKafka: 'quay.io/strimzi/kafka:1.2.0-kafka-4.3.1',
} as const;
