import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_ORDER } from '../src/environments';
import { synthesize } from '../src/synth';
import { temporaryDirectory, treeContents } from './support';

// Guards against unreviewed drift of everything the assertions do not pin. A changed
// snapshot is reviewed like the dist/ diff it mirrors (`npx vitest -u` to accept).
describe('rendered output snapshots', () => {
  const workdir = temporaryDirectory();
  synthesize({ outdir: path.join(workdir, 'dist') });
  const rendered = treeContents(path.join(workdir, 'dist'));
  fs.rmSync(workdir, { recursive: true, force: true });

  it.each(ENVIRONMENT_ORDER)('renders %s as reviewed', (environment) => {
    const files = [...rendered.entries()].filter(([file]) => file.startsWith(`${environment}${path.sep}`));
    expect(files.length).toBeGreaterThan(0);
    expect(Object.fromEntries(files)).toMatchSnapshot();
  });
});
