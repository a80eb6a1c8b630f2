import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureToolchain, locateToolchain } from '../../toolchain';
import { RefusedError } from '../base/errors';
import { MAX_ENCRYPTED_FILE_BYTES, readBoundedText } from './limits';

/**
 * The two upstream tools behind the secrets: sops (github.com/getsops/sops/v3) encrypts and
 * decrypts, age-keygen (filippo.io/age) makes key pairs. Both are built from their Go
 * modules at pinned versions by toolchain/build.sh into a cache outside the repository.
 */
export interface SopsTools {
  /** Absolute path of sops. */
  readonly sops: string;
  /** Absolute path of age-keygen. */
  readonly ageKeygen: string;
}

/** The cached binaries, built first when missing (about two minutes, once per machine). */
export function sopsTools(projectRoot: string): SopsTools {
  const locate = () => {
    const toolchain = locateToolchain(projectRoot);
    return { sops: toolchain.bin('sops', 'sops'), ageKeygen: toolchain.bin('age', 'age-keygen') };
  };
  try {
    return locate();
  } catch {
    ensureToolchain(['sops', 'age'], projectRoot);
    return locate();
  }
}

/** The first meaningful line of a tool's error output. */
function firstLine(text: string): string {
  return text.split('\n').map((line) => line.trim()).find((line) => line !== '' && !line.startsWith('[warning]')) ?? '(no output)';
}

/**
 * The environment sops runs in, allow-listed: the private keys given (SOPS_AGE_KEY, one
 * identity a line), an empty HOME of its own, and the temporary folder; nothing else of the
 * shell. sops runs commands named by its environment (SOPS_AGE_KEY_CMD,
 * SOPS_AGE_SSH_PRIVATE_KEY_CMD, an editor) and age plugins found on PATH (an `age1<name>1...`
 * recipient runs `age-plugin-<name>`), and reads keys from many variables and files
 * (SOPS_AGE_KEY_FILE, SOPS_AGE_SSH_PRIVATE_KEY_FILE, ~/.config/sops/age, cloud credentials):
 * none of them is passed, so nothing but sops runs and no key but the one given is used.
 */
function sopsEnvironment(identities: string, home: string): NodeJS.ProcessEnv {
  return { ...toolEnvironment(), SOPS_AGE_KEY: identities, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') };
}

/** What age-keygen and sops are given of the shell's environment: the temporary folder only. */
function toolEnvironment(): NodeJS.ProcessEnv {
  return process.env.TMPDIR === undefined ? {} : { TMPDIR: process.env.TMPDIR };
}

/** Runs sops; resolves its stdout or throws a RefusedError naming the file and sops' reason. */
export class Sops {
  constructor(
    private readonly tools: SopsTools,
    /** The repository root: sops reads `.sops.yaml` there. */
    private readonly root: string,
    /** Private age keys sops may decrypt with, one `AGE-SECRET-KEY-1...` line each. */
    private readonly identities: string,
    /** An empty folder used as sops' HOME, so no key of the person's own setup is used. */
    private readonly home: string,
  ) {}

  private run(args: readonly string[], file: string, input?: string): string {
    const result = spawnSync(this.tools.sops, ['--config', path.join(this.root, '.sops.yaml'), ...args], {
      cwd: this.root,
      input,
      encoding: 'utf8',
      env: sopsEnvironment(this.identities, this.home),
      // What sops prints is one Secret, encrypted or not: within the bound of an encrypted file.
      maxBuffer: MAX_ENCRYPTED_FILE_BYTES,
    });
    if (result.error) throw new RefusedError(`${file}: sops could not run (${result.error.message})`);
    if (result.status !== 0) throw new RefusedError(`${file}: sops ${args[0]} failed: ${firstLine(result.stderr)}`);
    return result.stdout;
  }

  /**
   * Plaintext YAML of an encrypted file, by path relative to the root: `text` when the caller
   * read it, else the file read within MAX_ENCRYPTED_FILE_BYTES. sops reads it from stdin, so
   * it never reads more than that bound.
   */
  decrypt(file: string, text: string = readBoundedText(path.join(this.root, file), 'MAX_ENCRYPTED_FILE_BYTES', file)): string {
    return this.run(['decrypt', '--filename-override', file], file, text);
  }

  /** `plaintext` encrypted under the creation rule of `file` (relative to the root), as sops writes it. */
  encrypt(file: string, plaintext: string): string {
    return this.run(['encrypt', '--filename-override', file], file, plaintext);
  }

  /** Re-encrypts the data key of `file` for the recipients `.sops.yaml` names now. */
  updateKeys(file: string): string {
    return this.run(['updatekeys', '--yes', file], file);
  }
}

/** Creates an age key pair in `file` (mode 0600, its folder 0700 when created). */
export function generateKey(tools: SopsTools, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const result = spawnSync(tools.ageKeygen, ['-o', file], { encoding: 'utf8', env: toolEnvironment() });
  if (result.status !== 0) throw new RefusedError(`${file}: age-keygen failed: ${firstLine(result.stderr)}`);
  fs.chmodSync(file, 0o600);
}

/** The public key (recipient) of the age key in `file`, read within MAX_KEY_FILE_BYTES and given to age-keygen on stdin. */
export function publicKeyOf(tools: SopsTools, file: string): string {
  const result = spawnSync(tools.ageKeygen, ['-y'], { encoding: 'utf8', env: toolEnvironment(), input: readBoundedText(file, 'MAX_KEY_FILE_BYTES') });
  if (result.status !== 0) throw new RefusedError(`${file}: not an age key file: ${firstLine(result.stderr)}`);
  return result.stdout.trim();
}
