import type { Application } from './schema';

/** The tag an application serves: its image tag, or the active blue-green unit's tag. */
export function runningTagOf(application: Application): string {
  const { strategy, image } = application;
  if (strategy.type === 'blue-green') return strategy.blueGreen.units[strategy.blueGreen.active]!.tag;
  // Validated: rolling and canary environments carry image.tag.
  return image.tag!;
}

/**
 * The newest tag an application renders: the schema the database must have. With blue-green
 * the new unit starts beside the old one, so its migrations run first and must keep the
 * schema readable by the old version (expand, then contract in a later release).
 */
export function newestTagOf(application: Application): string {
  const { strategy } = application;
  if (strategy.type !== 'blue-green') return runningTagOf(application);
  const tags = Object.values(strategy.blueGreen.units).map((unit) => unit!.tag);
  const version = (tag: string) => tag.slice(1).split('.').map(Number);
  return tags.reduce((newest, tag) => {
    const [a, b] = [version(tag), version(newest)];
    const order = a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
    return order > 0 ? tag : newest;
  });
}
