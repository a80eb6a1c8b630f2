import { runCommandLine } from '../src/tooling/cli';
import { E2E } from './command';

// The bundle of `npm run e2e` (scripts/build.cjs): the harness stays out of the product's
// bundle, src/main.ts, which never imports e2e/.
runCommandLine({ e2e: { summary: 'converge the committed platform on a local control plane and Argo CD', load: () => E2E } });
