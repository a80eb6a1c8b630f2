// `pulumi up` entry (Pulumi.yaml: main: pulumi/): bootstraps the stack's environment.
import { bootstrap, readBootstrapConfig } from './bootstrap';

const { argocd, repository, root } = bootstrap(readBootstrapConfig());

export const controllerNamespace = argocd.namespace.metadata.name;
export const argoCdInstall = argocd.install.urn;
export const repositorySecret = repository.secret.metadata.name;
export const rootApplication = root.application.metadata.name;
