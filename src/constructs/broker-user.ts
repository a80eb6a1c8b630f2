import type { Construct } from 'constructs';
import { BROKER } from '../contract/contract';
import { STRIMZI } from '../contract/upstream';
import {
  KafkaUser,
  KafkaUserSpecAuthenticationType,
  KafkaUserSpecAuthorizationAclsOperations,
  KafkaUserSpecAuthorizationAclsResourcePatternType,
  KafkaUserSpecAuthorizationAclsResourceType,
  KafkaUserSpecAuthorizationAclsType,
  KafkaUserSpecAuthorizationType,
} from '../imports/kafkauser-kafka.strimzi.io';
import type { SecretKeyReference } from './application-workload';

export interface BrokerUserProps {
  /** Namespace of the cluster. */
  readonly namespace: string;
  /** SCRAM user name (also the KafkaUser's name). */
  readonly name: string;
  /** Operations allowed, topic by topic (validated: topics of this environment only). */
  readonly acls: readonly { readonly topic: string; readonly operations: readonly string[] }[];
  /** Consumer group prefix the user may read with. @default - none (a producer only) */
  readonly consumerGroup?: string;
  /** The user's password, delivered by SOPS so the application holds the same one. */
  readonly password: SecretKeyReference;
}

/**
 * A broker user (1.3 step 6): SCRAM-SHA-512, allowed only the operations its environment
 * names on its own topics (literal names), plus reading with its own consumer groups.
 */
export class BrokerUser extends KafkaUser {
  constructor(scope: Construct, id: string, props: BrokerUserProps) {
    const allow = KafkaUserSpecAuthorizationAclsType.ALLOW;
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: { [STRIMZI.clusterLabel]: BROKER.clusterName } },
      spec: {
        authentication: {
          type: KafkaUserSpecAuthenticationType.SCRAM_HYPHEN_SHA_HYPHEN_512,
          password: { valueFrom: { secretKeyRef: { name: props.password.secret, key: props.password.key } } },
        },
        authorization: {
          type: KafkaUserSpecAuthorizationType.SIMPLE,
          acls: [
            ...props.acls.map((acl) => ({
              type: allow,
              resource: {
                type: KafkaUserSpecAuthorizationAclsResourceType.TOPIC,
                name: acl.topic,
                patternType: KafkaUserSpecAuthorizationAclsResourcePatternType.LITERAL,
              },
              // Validated against the same operation names (src/environments/data-services-schema.ts).
              operations: acl.operations.map((operation) => operation as KafkaUserSpecAuthorizationAclsOperations),
            })),
            ...(props.consumerGroup === undefined
              ? []
              : [
                  {
                    type: allow,
                    resource: {
                      type: KafkaUserSpecAuthorizationAclsResourceType.GROUP,
                      name: props.consumerGroup,
                      patternType: KafkaUserSpecAuthorizationAclsResourcePatternType.PREFIX,
                    },
                    operations: [KafkaUserSpecAuthorizationAclsOperations.READ],
                  },
                ]),
          ],
        },
      },
    });
  }
}
