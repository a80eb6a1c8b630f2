import type { ChartVersionChange, EnvironmentDiff, RenderedDiff } from './rendered-diff';
import type { SecretChange } from './secrets-diff';

/** `markdown` for a pull-request comment, `text` for a terminal. */
export const DIFF_FORMATS = ['text', 'markdown'] as const;
export type DiffFormat = (typeof DIFF_FORMATS)[number];

/** What was compared, for the report's first line. */
export interface DiffSides {
  /** e.g. `main@1a2b3c4`. */
  readonly base: string;
  /** e.g. `working tree` or `HEAD@5d6e7f8`. */
  readonly head: string;
}

function counts(env: EnvironmentDiff): string {
  return `${env.added.length} added, ${env.removed.length} removed, ${env.changed.length} changed`;
}

function indent(text: string, prefix: string): string {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

/** What the reports call the chart version records, and where they are. */
const VERSIONS_HEADING = 'Chart versions (each environment\'s record, beside its values)';

/** `webapp 0.2.3 -> 0.2.4 in src/environments/testing/chart-versions.json`: one moved version. */
function versionChange(change: ChartVersionChange): string {
  const move = change.before === undefined ? `new at ${change.after}` : change.after === undefined ? `${change.before}, removed` : `${change.before} -> ${change.after}`;
  return `${change.environment}: ${change.application} ${move} in ${change.file}`;
}

/** Plain text: one block per environment, `+`/`-`/`~` per object, diffs indented below; then the chart versions that moved. */
export function formatText(diff: RenderedDiff, sides: DiffSides): string {
  const versions = diff.versions ?? [];
  if (diff.environments.length === 0 && versions.length === 0) return `No rendered changes from ${sides.base} to ${sides.head}\n`;
  const lines = [`Rendered changes from ${sides.base} to ${sides.head}`];
  if (versions.length > 0) lines.push('', `${VERSIONS_HEADING}:`, ...versions.map((change) => `  ${versionChange(change)}`));
  for (const env of diff.environments) {
    lines.push('', `${env.environment}: ${counts(env)}`);
    for (const object of env.added) lines.push(`  + ${object.label} (${object.file})`);
    for (const object of env.removed) lines.push(`  - ${object.label} (${object.file})`);
    for (const object of env.changed) lines.push(`  ~ ${object.label} (${object.file})`, indent(object.patch, '      '));
  }
  return `${lines.join('\n')}\n`;
}

/** A code fence longer than any run of backticks inside the text (YAML may hold some). */
function fence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/** Inline code that also works inside HTML (`<summary>` does not render Markdown). */
function code(text: string): string {
  return `<code>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</code>`;
}

/**
 * Markdown for a pull-request comment: a summary table, then per environment the added
 * and removed objects and a collapsed unified diff of each changed one.
 */
export function formatMarkdown(diff: RenderedDiff, sides: DiffSides): string {
  const header = `### Rendered changes\n\nFrom ${code(sides.base)} to ${code(sides.head)}.`;
  const versions = diff.versions ?? [];
  if (diff.environments.length === 0 && versions.length === 0) return `${header}\n\nNo rendered changes.\n`;
  const parts = [
    header,
    ['| Environment | Added | Removed | Changed |', '|---|---:|---:|---:|',
      ...diff.environments.map((env) => `| ${env.environment} | ${env.added.length} | ${env.removed.length} | ${env.changed.length} |`),
    ].join('\n'),
  ];
  if (versions.length > 0) parts.push([`${VERSIONS_HEADING}:`, ...versions.map((change) => `- ${code(versionChange(change))}`)].join('\n'));
  for (const env of diff.environments) {
    parts.push(`#### ${env.environment}`);
    if (env.added.length > 0) parts.push(['Added:', ...env.added.map((o) => `- ${code(o.label)} in ${code(o.file)}`)].join('\n'));
    if (env.removed.length > 0) parts.push(['Removed:', ...env.removed.map((o) => `- ${code(o.label)} in ${code(o.file)}`)].join('\n'));
    if (env.changed.length > 0) {
      parts.push('Changed:');
      for (const object of env.changed) {
        const f = fence(object.patch);
        parts.push(
          `<details><summary>${code(object.label)} in ${code(object.file)}</summary>\n\n${f}diff\n${object.patch.replace(/\n$/, '')}\n${f}\n\n</details>`,
        );
      }
    }
  }
  return `${parts.join('\n\n')}\n`;
}

const MARK: Readonly<Record<SecretChange['change'], string>> = { added: '+', removed: '-', changed: '~' };

/** The encrypted Secrets that changed, as text: each named, with what changed below it (never a value). */
export function formatSecretsText(secrets: readonly SecretChange[]): string {
  if (secrets.length === 0) return '';
  const lines = ['', `Encrypted Secrets (secrets/): ${secrets.length} changed; values are never shown`];
  for (const secret of secrets) lines.push(`  ${MARK[secret.change]} ${secret.label} (${secret.file})`, ...secret.details.map((detail) => `      ${detail}`));
  return `${lines.join('\n')}\n`;
}

/** The same, as Markdown. */
export function formatSecretsMarkdown(secrets: readonly SecretChange[]): string {
  if (secrets.length === 0) return '';
  const lines = ['', '#### Encrypted Secrets (secrets/)', '', 'Values are never shown.', ''];
  for (const secret of secrets) lines.push(`- ${secret.change} ${code(secret.label)} in ${code(secret.file)}`, ...secret.details.map((detail) => `  - ${code(detail)}`));
  return `${lines.join('\n')}\n`;
}

export function formatDiff(diff: RenderedDiff, sides: DiffSides, format: DiffFormat, secrets: readonly SecretChange[] = []): string {
  return format === 'markdown' ? formatMarkdown(diff, sides) + formatSecretsMarkdown(secrets) : formatText(diff, sides) + formatSecretsText(secrets);
}
