import { checkEncryptedFiles } from '../secrets/encryption';
import { readBoundedText } from '../secrets/limits';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ENVIRONMENT_ORDER, type Environment, loadEnvironments } from '../environments';
import { RefusedError, UsageError } from '../base/errors';
import { type CommandContext, type CommandDefinition, type CommandGroup } from '../tooling/cli';
import { readValuesTexts } from '../environments/values-file';
import { type Assignment, type InitReport, defaultAgeKeyFile, initEnvironment, rotateKeys } from '../secrets/init';
import { RETIRED_FILES, expectedEncryptedFiles, secretsLayout, symbolicLinkProblem, symbolicLinksUnder } from '../secrets/layout';
import { secretsPath } from '../contract/layout';
import { projectFiles, scanForPlaintextSecrets } from '../secrets/scan';
import { sopsTools } from '../secrets/sops';
import { withProjectLock } from '../release/edit-lock';
import { catalogByFile, unhandledNames } from '../secrets/shape';

/** What every subcommand takes, and how its usage ends. */
const ROOT_OPTION = { root: { type: 'string' } } as const;
const ROOT_USAGE = 'Options for every command: --root <dir> (the repository, default: the project root)';

/** What each subcommand does, as the usage lists it (`npm run secrets -- --help` shows them all). */
const INIT_HELP = `  init <environment>  create the environment's age key pair when missing (outside the repository),
                      put its public key into .sops.yaml, and write every Secret of the environment
                      as a SOPS-encrypted manifest, secrets/<environment>/<group>/<name>.sops.yaml:
                      platform-owned values generated once (passwords), values only people have
                      from PLATFORM_GITOPS_<SECRET>_<KEY>, --set or --from-file (local: safe
                      defaults); lists what is still missing. Running it again changes nothing.
      --key-file <file>             the private key (default ~/.config/platform-gitops/age/<environment>.key)
      --set <SECRET.KEY=VALUE>      a value, e.g. --set chat-webhook.url=https://chat.example.com/hooks/1 (repeatable)
      --from-file <SECRET.KEY=PATH> a value read from a file, e.g. registry-pull..dockerconfigjson=config.json (repeatable)
      --rotate <secret>             generate that Secret's platform-owned values anew, with their copies (repeatable)
      --rotate-key                  a new key pair; the old one is kept as <key-file>.previous and still decrypts`;
const ROTATE_KEYS_HELP = `  rotate-keys <environment>  after the environment's recipient in .sops.yaml changed: sops updatekeys on
                      every encrypted file of the environment
      --key-file <file>             the environment's key (default as above)
      --old-key-file <file>         a key the files are encrypted for now, if not --key-file (repeatable)`;
const SCAFFOLD_HELP = `  scaffold   write the key-only templates of every environment under secrets/ from
             src/secrets/catalog.ts (never touches *.sops.yaml; removes the retired KSOPS files)`;
const CHECK_HELP = `  check      fail, naming the files, if the templates differ from the catalog or secrets/<environment>/
             holds a template or encrypted file the catalog does not expect (scaffold lists those;
             a person removes them), an encrypted file is not exactly the catalog's Secret of its
             path, a symbolic link or an odd name, or .sops.yaml gives one key to two environments`;
const MISSING_HELP = '  missing    list the encrypted files of the catalog that do not exist yet';
const SCAN_HELP = `  scan       fail, naming the files, if a project file holds plaintext secret material
             (private keys, age keys also base64-encoded, Secrets with unencrypted data or
             stringData also in templates and strings, plaintext Pulumi secrets) or an
             encrypted file that is not exactly the catalog's Secret of its path`;

const USAGE = `usage: npm run secrets -- <command> [options]

Commands:
${[INIT_HELP, ROTATE_KEYS_HELP, SCAFFOLD_HELP, CHECK_HELP, MISSING_HELP, SCAN_HELP].join('\n')}

${ROOT_USAGE}`;

/** A subcommand's usage: its line of `npm run secrets`, then its part of the whole usage. */
function subcommandUsage(synopsis: string, help: string): string {
  return `usage: npm run secrets -- ${synopsis}\n\n${help}\n\n${ROOT_USAGE}`;
}

/** The repository a subcommand works in: the project root, or --root resolved against the current folder. */
function repository(values: { root?: string }, { root }: CommandContext): string {
  return values.root === undefined ? root : path.resolve(values.root);
}

/** The folder the default key files are below: $HOME, as os.homedir() reads it. */
function home({ env }: CommandContext): string | undefined {
  return env.HOME === undefined || env.HOME === '' ? undefined : env.HOME;
}

/** What init and rotate-keys act on: the repository, the one environment named, and its key file. */
function keyedEnvironment(values: { root?: string; 'key-file'?: string }, positionals: readonly string[], context: CommandContext, command: string) {
  const environment = environmentArgument(context.root, positionals, command);
  return { root: repository(values, context), environment, keyFile: path.resolve(values['key-file'] ?? defaultAgeKeyFile(environment.name, home(context))) };
}

/** The one environment a subcommand is given, validated from the values files below `project`. */
function environmentArgument(project: string, positionals: readonly string[], command: string) {
  const [name, ...rest] = positionals;
  if (name === undefined) throw new UsageError(`${command} needs an environment (${ENVIRONMENT_ORDER.join(', ')})`);
  if (rest.length > 0) throw new UsageError(`${command} takes one environment, got also: ${rest.join(' ')}`);
  const environment = loadEnvironments(readValuesTexts(project)).find((candidate) => candidate.name === name);
  if (environment === undefined) throw new UsageError(`unknown environment "${name}" (${ENVIRONMENT_ORDER.join(', ')})`);
  return environment;
}

function printReport({ out, err }: CommandContext, environment: string, keyFile: string, report: InitReport): void {
  out(`${environment}: age key ${keyFile}${report.keyCreated ? ' (created)' : ''}, public key ${report.publicKey}\n`);
  if (report.sopsConfigChanged) out(`${environment}: .sops.yaml now encrypts secrets/${environment}/ to ${report.publicKey}\n`);
  for (const file of report.written) out(`  wrote ${file}\n`);
  if (report.unchanged.length > 0) out(`  ${report.unchanged.length} encrypted files already up to date\n`);
  if (report.created.length > 0) out(`  new values: ${report.created.join(', ')}\n`);
  for (const note of report.reconciled) out(`  made consistent: ${note}\n`);
  if (report.missing.length === 0) {
    out(`${environment}: every Secret is encrypted; review and commit secrets/${environment}/ and .sops.yaml\n`);
    return;
  }
  err(`${environment}: values only people have are missing; these Secrets were not written:\n`);
  for (const { file, keys } of report.missing) {
    err(`  ${file}\n`);
    for (const key of keys) err(`    - ${key.id}: ${key.what} (set ${key.variable}, or --set ${key.id}=... / --from-file ${key.id}=<file>)\n`);
  }
}

const INIT_OPTIONS = {
  ...ROOT_OPTION,
  'key-file': { type: 'string' },
  set: { type: 'string', multiple: true },
  'from-file': { type: 'string', multiple: true },
  rotate: { type: 'string', multiple: true },
  'rotate-key': { type: 'boolean' },
} as const;

/** `npm run secrets -- init <environment>`: the key pair, the recipient and every Secret encrypted. */
const INIT: CommandDefinition<typeof INIT_OPTIONS> = {
  name: 'secrets',
  usage: subcommandUsage('init <environment> [options]', INIT_HELP),
  options: INIT_OPTIONS,
  positionals: true,
  run(values, positionals, context) {
    const { root, environment, keyFile } = keyedEnvironment(values, positionals, context, 'init');
    const assignments: Assignment[] = [];
    // parseArgs keeps each option's values in order; --set before --from-file is enough here.
    for (const text of values.set ?? []) assignments.push({ option: '--set', text });
    for (const text of values['from-file'] ?? []) assignments.push({ option: '--from-file', text });
    if (!fs.existsSync(path.join(root, '.sops.yaml'))) throw new RefusedError(`${root} has no .sops.yaml: run init in the repository (or name it with --root)`);
    // The release commands' edit lock: two runs at once would each restore .sops.yaml over the other's change.
    const report = withEditLock(root, 'secrets init', context, () => initEnvironment({
      root,
      environment,
      keyFile,
      assignments,
      rotate: values.rotate ?? [],
      rotateKey: values['rotate-key'] ?? false,
      env: context.env,
      tools: sopsTools(context.root),
    }));
    printReport(context, environment.name, keyFile, report);
    return report.missing.length === 0 ? 0 : 1;
  },
};

const ROTATE_KEYS_OPTIONS = { ...ROOT_OPTION, 'key-file': { type: 'string' }, 'old-key-file': { type: 'string', multiple: true } } as const;

/** `npm run secrets -- rotate-keys <environment>`: re-encrypt for the recipients in .sops.yaml. */
const ROTATE_KEYS: CommandDefinition<typeof ROTATE_KEYS_OPTIONS> = {
  name: 'secrets',
  usage: subcommandUsage('rotate-keys <environment> [options]', ROTATE_KEYS_HELP),
  options: ROTATE_KEYS_OPTIONS,
  positionals: true,
  run(values, positionals, context) {
    const { root, environment, keyFile } = keyedEnvironment(values, positionals, context, 'rotate-keys');
    const oldKeyFiles = (values['old-key-file'] ?? []).map((file) => path.resolve(file));
    const files = withEditLock(root, 'secrets rotate-keys', context, () => rotateKeys({ root, environment, keyFile, oldKeyFiles, tools: sopsTools(context.root) }));
    for (const file of files) context.out(`  updated keys of ${file}\n`);
    context.out(`${environment.name}: ${files.length} encrypted files now encrypted for the recipients in .sops.yaml\n`);
    return 0;
  },
};

/**
 * `work` holding the repository's edit lock (src/release/edit-lock.ts), the one the release
 * commands and synth take: one command writing `.sops.yaml`, secrets/ or the values at a time.
 */
function withEditLock<T>(root: string, command: string, { err }: CommandContext, work: () => T): T {
  return withProjectLock(root, command, (line) => err(`${command}: ${line}\n`), () => work());
}

/** A subcommand that takes `--root` and no environment. */
function repositoryCommand(
  synopsis: string,
  help: string,
  run: (root: string, context: CommandContext) => number,
): CommandDefinition<typeof ROOT_OPTION> {
  return { name: 'secrets', usage: subcommandUsage(synopsis, help), options: ROOT_OPTION, run: (values, _positionals, context) => run(repository(values, context), context) };
}

/** `npm run secrets -- scaffold`: write the templates the catalog says. */
const SCAFFOLD = repositoryCommand('scaffold [--root <dir>]', SCAFFOLD_HELP, (root, { root: project, out }) => {
  // It writes files: only where a platform repository's secrets live, never into any folder named.
  if (!fs.existsSync(path.join(root, '.sops.yaml'))) {
    throw new RefusedError(`--root ${root} has no .sops.yaml: scaffold writes secrets/ of a platform repository only (name its folder with --root)`);
  }
  const environments = loadEnvironments(readValuesTexts(project));
  const layout = secretsLayout(environments);
  for (const [file, content] of layout) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), content);
  }
  const retired = retiredFiles(root);
  for (const file of retired) fs.rmSync(path.join(root, file));
  out(`wrote ${layout.size} templates under secrets/${retired.length > 0 ? `, removed ${retired.length} retired KSOPS files` : ''}\n`);
  // Never deleted here: an encrypted file holds values only people have; they remove it.
  const unexpected = unexpectedFiles(root, environments);
  if (unexpected.length > 0) {
    out('the catalog no longer expects these files; remove them (git rm) and commit:\n');
    for (const file of unexpected) out(`  - ${file}\n`);
  }
  return 0;
});

/** `npm run secrets -- check`: secrets/ is what the catalog says, and holds nothing else. */
const CHECK = repositoryCommand('check [--root <dir>]', CHECK_HELP, (root, { root: project, out, err }) => {
  const environments = loadEnvironments(readValuesTexts(project));
  const layout = secretsLayout(environments);
  const differences = [...layout]
    .filter(([file, content]) => {
      const target = path.join(root, file);
      return !fs.existsSync(target) || readBoundedText(target, 'MAX_ENCRYPTED_FILE_BYTES', file) !== content;
    })
    .map(([file]) => file);
  const stale = [...differences, ...retiredFiles(root)].sort();
  const unexpected = unexpectedFiles(root, environments);
  if (stale.length > 0) {
    err('secrets/ is not what the catalog says; run `npm run secrets -- scaffold` and commit:\n');
    for (const file of stale) err(`  - ${file}\n`);
  }
  if (unexpected.length > 0) {
    err('secrets/ holds files the catalog does not expect (they would still sync); remove them (git rm) and commit:\n');
    for (const file of unexpected) err(`  - ${file}\n`);
  }
  const names = unhandledNames(root);
  if (names.length > 0) {
    err('secrets/ holds names no catalog file has (letters, digits, ".", "-" and "_" only); rename or remove them:\n');
    for (const file of names) err(`  - ${JSON.stringify(file)}\n`);
  }
  const links = symbolicLinksUnder(root);
  if (links.length > 0) {
    err('secrets/ holds symbolic links; it holds regular files only:\n');
    for (const file of links) err(`  - ${symbolicLinkProblem(file)}\n`);
  }
  const encryption = checkEncryptedFiles(root, environments);
  if (encryption.length > 0) {
    err('the encrypted Secrets are not what .sops.yaml promises (each environment\'s key alone, every value encrypted) or not the catalog\'s Secret of their path (one v1 Secret: its name, namespace, type and keys, nothing else):\n');
    for (const line of encryption) err(`  - ${line}\n`);
  }
  if (stale.length > 0 || unexpected.length > 0 || names.length > 0 || links.length > 0 || encryption.length > 0) return 1;
  out('secrets/ matches the catalog\n');
  return 0;
});

/** `npm run secrets -- missing`: the encrypted files not written yet. */
const MISSING = repositoryCommand('missing [--root <dir>]', MISSING_HELP, (root, { root: project, out }) => {
  const missing = expectedEncryptedFiles(loadEnvironments(readValuesTexts(project))).filter((file) => !fs.existsSync(path.join(root, file)));
  for (const file of missing) out(`${file}\n`);
  return 0;
});

/** `npm run secrets -- scan`: no plaintext secret material in a file git would commit. */
const SCAN = repositoryCommand('scan [--root <dir>]', SCAN_HELP, (root, { root: project, out, err }) => {
  const files = projectFiles(root);
  const findings = scanForPlaintextSecrets(files, catalogByFile(loadEnvironments(readValuesTexts(project))));
  for (const finding of findings) err(`${finding.file}: ${finding.problem}\n`);
  out(`${files.size} files scanned, ${findings.length} with plaintext secret material\n`);
  return findings.length > 0 ? 1 : 0;
});

/** `npm run secrets`: the SOPS-encrypted Secrets and their templates (docs/secrets.md), one subcommand each. */
export const SECRETS: CommandGroup = {
  name: 'secrets',
  usage: USAGE,
  subcommands: { init: INIT, 'rotate-keys': ROTATE_KEYS, scaffold: SCAFFOLD, check: CHECK, missing: MISSING, scan: SCAN },
};

/** Suffixes of the files the catalog writes under secrets/<environment>/: templates and encrypted manifests. */
const CATALOG_SUFFIXES = ['.template.yaml', '.sops.yaml'] as const;

/**
 * Templates and encrypted files under `root`'s secrets/<environment>/ folders that the
 * catalog of `environments` does not expect (an application or Secret removed), sorted.
 */
function unexpectedFiles(root: string, environments: readonly Environment[]): string[] {
  const expected = new Set([...secretsLayout(environments).keys(), ...expectedEncryptedFiles(environments)]);
  return ENVIRONMENT_ORDER.flatMap((environment) => {
    const folder = path.join(root, path.dirname(secretsPath(environment, '_')));
    if (!fs.existsSync(folder)) return [];
    return (fs.readdirSync(folder, { recursive: true, withFileTypes: true }) as fs.Dirent[])
      .filter((entry) => entry.isFile() && CATALOG_SUFFIXES.some((suffix) => entry.name.endsWith(suffix)))
      .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  })
    .filter((file) => !expected.has(file))
    .sort();
}

/** KSOPS files a former scaffold wrote, still present under `root` in any group folder. */
function retiredFiles(root: string): string[] {
  return ENVIRONMENT_ORDER.flatMap((environment) => {
    const folder = path.join(root, path.dirname(secretsPath(environment, '_')));
    const groups = fs.existsSync(folder) ? fs.readdirSync(folder, { withFileTypes: true }).filter((entry) => entry.isDirectory()) : [];
    return groups.flatMap((group) => RETIRED_FILES.map((name) => `${secretsPath(environment, group.name)}/${name}`));
  }).filter((file) => fs.existsSync(path.join(root, file)));
}
