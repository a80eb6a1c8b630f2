import { formatText } from '../diff/format';
import type { ReleaseResult } from './release';

/** What release and promote print: the change, then the rendered diff of dist/. */
export function describeResult(result: ReleaseResult): string {
  const { change } = result;
  if (!result.written) return `${change.environment} already runs ${change.tag}; nothing was written.\n`;
  return `${change.summary}\nWrote src/environments/${change.environment}.ts and re-rendered dist/.\n\n${formatText(result.diff, {
    base: 'dist/ before',
    head: 'dist/ after',
  })}`;
}
