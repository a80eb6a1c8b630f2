import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadEnvironments } from '../environments';
import { UsageError } from '../errors';
import { runCommand } from '../tooling/cli';
import { expectedEncryptedFiles, secretsLayout } from '../secrets/layout';
import { projectFiles, scanForPlaintextSecrets } from '../secrets/scan';

const USAGE = `usage: npm run secrets -- <command> [--root <dir>]

Commands:
  scaffold   write the KSOPS kustomizations, generators and templates of every
             environment under secrets/ from src/secrets/catalog.ts (never touches *.sops.yaml)
  check      fail, naming the files, if the scaffold differs from the catalog
  missing    list the encrypted files the generators name that are not committed yet
  scan       fail, naming the files, if a project file holds plaintext secret material
             (private keys, Secrets with unencrypted data or stringData)`;

runCommand({
  name: 'secrets',
  usage: USAGE,
  options: {
    root: { type: 'string' },
  },
  positionals: true,
  run(values, positionals) {
    const [command] = positionals;
    if (command === undefined) throw new UsageError('a command is required: scaffold, check, missing or scan');
    const root = path.resolve(values.root ?? '.');
    const environments = loadEnvironments();
    const layout = secretsLayout(environments);
    switch (command) {
      case 'scaffold':
        for (const [file, content] of layout) {
          fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
          fs.writeFileSync(path.join(root, file), content);
        }
        console.log(`wrote ${layout.size} files under secrets/`);
        return 0;
      case 'check': {
        const differences = [...layout].filter(([file, content]) => {
          const target = path.join(root, file);
          return !fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== content;
        });
        if (differences.length > 0) {
          console.error('secrets/ is not what the catalog says; run `npm run secrets -- scaffold` and commit:');
          for (const [file] of differences) console.error(`  - ${file}`);
          return 1;
        }
        console.log('secrets/ matches the catalog');
        return 0;
      }
      case 'missing': {
        const missing = expectedEncryptedFiles(environments).filter((file) => !fs.existsSync(path.join(root, file)));
        for (const file of missing) console.log(file);
        return 0;
      }
      case 'scan': {
        const files = projectFiles(root);
        const findings = scanForPlaintextSecrets(files);
        for (const finding of findings) console.error(`${finding.file}: ${finding.problem}`);
        console.log(`${files.size} files scanned, ${findings.length} with plaintext secret material`);
        return findings.length > 0 ? 1 : 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"; choose scaffold, check, missing or scan`);
    }
  },
});

