import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCommittedObjects } from '../../src/commands/bench';
import { ROOT } from '../support';

// The bench's same-objects floor must synthesize exactly what synth commits, or the ratio
// against it compares different work.
describe("the bench's same-objects floor (scripts/bench-floor-objects.cjs)", () => {
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-floor-test-'));
  afterAll(() => fs.rmSync(workdir, { recursive: true, force: true }));

  const documents = (file: string) =>
    YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'))
      .map((document) => document.toJS())
      .filter((object) => object !== null);

  it('writes every committed object, file by file, and cdk8s synthesizes them unchanged', () => {
    const objectsFile = path.join(workdir, 'objects.json');
    const count = writeCommittedObjects(path.join(ROOT, 'dist'), objectsFile);
    const committed = fs
      .readdirSync(path.join(ROOT, 'dist'))
      .filter((environment) => fs.statSync(path.join(ROOT, 'dist', environment)).isDirectory())
      .flatMap((environment) =>
        fs
          .readdirSync(path.join(ROOT, 'dist', environment))
          .filter((name) => name.endsWith('.yaml'))
          .map((name) => `${environment}/${name}`),
      );
    expect(count).toBe(committed.reduce((sum, file) => sum + documents(path.join(ROOT, 'dist', file)).length, 0));

    const out = path.join(workdir, 'out');
    const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'bench-floor-objects.cjs'), objectsFile, out], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    for (const file of committed) {
      expect(documents(path.join(out, file)), file).toEqual(documents(path.join(ROOT, 'dist', file)));
    }
  });
});
