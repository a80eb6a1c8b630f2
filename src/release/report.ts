import { formatText } from '../diff/format';
import type { ReleaseResult } from './release';

/**
 * What release, promote, switch, retire and rollback print: the change, the chart versions
 * it moved in the environment's record (which lives beside the values, not in dist/), then
 * the rendered diff of dist/.
 */
export function describeResult(result: ReleaseResult): string {
  const { edit } = result;
  if (!result.written) return `${edit.environment} already runs ${edit.application} ${edit.value}; nothing was written.\n`;
  const moves = (result.versions ?? []).map((move) => `Chart version of ${move.application} in ${move.file}: ${move.before ?? 'none'} -> ${move.after}.\n`);
  return `${edit.summary}\nWrote ${edit.file} and re-rendered dist/.\n${moves.join('')}\n${formatText(result.diff, {
    base: 'dist/ before',
    head: 'dist/ after',
  })}`;
}
