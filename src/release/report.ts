import { formatText } from '../diff/format';
import type { ReleaseResult } from './release';

/**
 * What release, promote, switch, retire and rollback print: the change, then the rendered
 * diff of dist/ with the chart versions it moved in the environment's record (which lives
 * beside the values, not in dist/).
 */
export function describeResult(result: ReleaseResult): string {
  const { edit } = result;
  if (!result.written) return `${edit.environment} already runs ${edit.application} ${edit.value}; nothing was written.\n`;
  return `${edit.summary}\nWrote ${edit.file} and re-rendered dist/.\n\n${formatText(result.diff, {
    base: 'dist/ before',
    head: 'dist/ after',
  })}`;
}
