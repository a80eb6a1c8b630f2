import { describe, expect, it } from 'vitest';
import { IMAGES } from '../src/contract/images';
import { ENVIRONMENT_ORDER, committedObjects, projectEnvironments } from './support';

// Convergence item 12: no rendered object may name an image that the project does not build
// and test, or that upstream does not publish. What the application's CI builds (1.1 step 2)
// is the application image and its migrations image (9.4); everything else is an upstream
// image pinned in one place (IMAGES, src/contract/images.ts), each with its source there.

/** Every `image` value anywhere in an object (containers, init containers, Helm values). */
function imagesIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) imagesIn(item, found);
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === 'image' && typeof child === 'string') found.push(child);
      else imagesIn(child, found);
    }
  }
  return found;
}

describe.each(ENVIRONMENT_ORDER)('images rendered in %s', (name) => {
  it('names only the application\'s own images and pinned upstream ones', () => {
    const built = projectEnvironments()[name]!.applications.map(
      ({ image, name: application }) => new RegExp(`^${image.registry}/${image.project}/${application}(-migrations)?:v\\d+\\.\\d+\\.\\d+$`),
    );
    const upstream = new Set<string>(Object.values(IMAGES));
    const images = [...new Set(committedObjects(name).flatMap((object) => imagesIn(object)))].sort();
    expect(images.length).toBeGreaterThan(0);
    for (const reference of images) expect(built.some((pattern) => pattern.test(reference)) || upstream.has(reference), reference).toBe(true);
  });
});
