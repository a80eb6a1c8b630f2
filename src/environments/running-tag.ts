import type { Environment } from './schema';

/** The tag an environment serves: its image tag, or the active blue-green unit's tag. */
export function runningTagOf(environment: Environment): string {
  const { strategy, image } = environment;
  if (strategy.type === 'blue-green') return strategy.blueGreen.units[strategy.blueGreen.active]!.tag;
  // Validated: rolling and canary environments carry image.tag.
  return image.tag!;
}
