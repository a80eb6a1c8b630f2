import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadEnvironments } from '../src/environments';
import { versionFacts } from '../src/infrastructure/release-versions';
import { crdKindsByFile, environmentCrdFiles, uninstalledCrdObjects } from '../src/validation/release-crds';
import { CRD_DIR, crdFileNames, SCHEMA_DIR } from '../src/validation/schema-catalog';
import { committedObjects, ROOT } from './support';

const schemaDir = path.join(ROOT, SCHEMA_DIR);

describe('the CRD schemas follow the release versions each environment runs', () => {
  it('reads the group and kind of every CRD file as a YAML parser does', () => {
    const kinds = crdKindsByFile(schemaDir);
    for (const file of crdFileNames(schemaDir)) {
      const [crd] = parseAllDocuments(fs.readFileSync(path.join(schemaDir, CRD_DIR, file), 'utf8')).map((document) => document.toJS());
      expect(kinds.get(file), file).toEqual([`${crd.spec.group}/${crd.spec.names.kind}`]);
    }
  });

  it("installs, in every environment, the CRDs of every custom resource it renders", () => {
    const kinds = crdKindsByFile(schemaDir);
    for (const environment of loadEnvironments()) {
      const objects = committedObjects(environment.name).map((object) => ({ environment: environment.name, file: '-', object }));
      expect(uninstalledCrdObjects(objects, kinds, environmentCrdFiles(environment), '-'), environment.name).toEqual([]);
    }
  });

  it("takes the CRD files from the facts of the versions the environment's values name", () => {
    for (const environment of loadEnvironments()) {
      const expected = Object.entries(environment.infrastructure.versions).flatMap(([release, version]) => versionFacts(release, version)!.crdSchemas);
      expect([...environmentCrdFiles(environment)].sort(), environment.name).toEqual([...new Set(expected)].sort());
    }
  });

  it('refuses an object whose CRD no version the environment runs installs, and never a core kind', () => {
    const kinds = crdKindsByFile(schemaDir);
    const [file, [kind]] = [...kinds].find(([, list]) => list[0]!.startsWith('cert-manager.io/'))! as [string, string[]];
    const [group, name] = kind!.split('/') as [string, string];
    const objects = [
      { environment: 'testing', file: 'issuers.yaml', object: { apiVersion: `${group}/v1`, kind: name, metadata: { name: 'x' } } },
      { environment: 'testing', file: 'issuers.yaml', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } } },
    ];
    const installed = new Set([...kinds.keys()].filter((candidate) => candidate !== file));
    expect(uninstalledCrdObjects(objects, kinds, installed, 'cert-manager v0')).toEqual([
      { subject: objects[0], message: `${kind} is a CRD (schemas/${CRD_DIR}/${file}) that no release version this environment runs installs (cert-manager v0)` },
    ]);
    expect(uninstalledCrdObjects(objects, kinds, new Set(kinds.keys()), '-')).toEqual([]);
  });
});
