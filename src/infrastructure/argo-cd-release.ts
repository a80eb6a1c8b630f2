/**
 * The Argo CD release the platform installs: the one constant that names it. The
 * kustomization's remote base (src/infrastructure/argo-cd-kustomization.ts) reads this tag
 * of the repository's `manifests/`, the CRD schemas (schemas/crds/argocd-*.yaml) are this
 * tag's, and the e2e builds and runs this version from its Go module (toolchain/build.sh
 * ARGOCD_VERSION, toolchain/argocd/go.mod): a test keeps them equal.
 */
export const ARGO_CD_RELEASE = {
  /** The upstream repository, as a kustomize remote base names it (git over HTTPS). */
  repoURL: 'https://github.com/argoproj/argo-cd',
  /** The release tag. */
  version: 'v3.6.1',
  /** The Go module the e2e builds Argo CD from; its `manifests/` are the tag's. */
  module: 'github.com/argoproj/argo-cd/v3',
} as const;
