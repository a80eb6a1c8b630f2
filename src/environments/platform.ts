import * as z from 'zod';
import { INFRASTRUCTURE_NAMESPACES } from '../contract/choices';
import { ConfigError } from '../base/errors';
import { section, sectionMessage } from './fields';
import { formatIssue } from './validate';

/**
 * Platform-wide settings: the same for every environment (where the GitOps repository
 * lives, which branch the controller follows, the Argo CD project). Data, validated by
 * zod like an environment file; errors read `platform: <field path> <value> <rule>`.
 */

/** `git@host:path.git` or `ssh://git@host[:port]/path.git`: Argo CD reads it with the SSH key (5.3). */
const SSH_URL = /^(git@[a-z0-9.-]+:|ssh:\/\/git@[a-z0-9.-]+(:\d{1,5})?\/)[A-Za-z0-9._/-]+\.git$/;
const BRANCH = /^(?!\/)(?!.*\.\.)(?!.*\/$)[A-Za-z0-9._/-]+$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const platformSchema = section({
  repository: section({
    /** SSH URL of this repository: the only source the AppProject allows (5.3). */
    url: z.string({ error: 'is required and must be a string' }).regex(SSH_URL, {
      error: 'must be an SSH repository URL such as "git@github.com:example/platform-gitops.git"',
    }),
    /**
     * Branch the controller follows and `npm run diff` compares against: the contract's
     * "master" (1.3, 1.1) is this repository's `main`. A test checks that the branch exists.
     */
    targetRevision: z
      .string({ error: 'is required and must be a string' })
      .regex(BRANCH, { error: 'must be a branch name such as "main"' }),
  }),
  controller: section({
    /** Namespace Argo CD runs in; its Applications and repository Secret live there (5.3). */
    namespace: z.string({ error: 'is required and must be a string' }).regex(DNS_LABEL, { error: 'must be a DNS label' }),
    /** The root Application's AppProject (its AppProjects and Applications in Argo CD's namespace); every other Application has its own. */
    project: z.string({ error: 'is required and must be a string' }).regex(DNS_LABEL, { error: 'must be a DNS label' }),
  }),
});

export type PlatformInput = z.input<typeof platformSchema>;
export type Platform = z.output<typeof platformSchema>;

/** The platform's settings. */
export const PLATFORM = {
  repository: {
    url: 'git@github.com:example/platform-gitops.git',
    targetRevision: 'main',
  },
  controller: {
    namespace: INFRASTRUCTURE_NAMESPACES.controller,
    project: 'platform',
  },
} satisfies PlatformInput;

/** The port git reaches the repository on over SSH: the URL's, or SSH's 22. */
export function repositorySshPort(url: string): number {
  const port = /^ssh:\/\/git@[a-z0-9.-]+:(\d{1,5})\//.exec(url)?.[1];
  return port === undefined ? 22 : Number(port);
}

/** Validate the platform settings; throws one ConfigError listing every problem. */
export function loadPlatform(input: unknown = PLATFORM): Platform {
  const result = platformSchema.safeParse(input, { reportInput: true, error: sectionMessage });
  if (!result.success) throw new ConfigError(result.error.issues.map((issue) => formatIssue(() => 'platform', issue, input)));
  return result.data;
}
